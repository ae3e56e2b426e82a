// Types of the `bloomfilter` package (it ships none): the parts this project uses.
declare module 'bloomfilter' {
  export class BloomFilter {
    /** `m` bits (rounded up to a multiple of 32), `k` hash functions. */
    constructor (m: number, k: number)
    readonly m: number
    readonly k: number
    add (value: string): void
    /** False when `value` was never added; true when it was (and, rarely, when it was not). */
    test (value: string): boolean
  }
}
