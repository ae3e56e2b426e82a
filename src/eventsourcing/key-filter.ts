import { BloomFilter } from 'bloomfilter'

/**
 * A Bloom filter of document keys (Bloom 1970, "Space/time trade-offs in hash coding with
 * allowable errors"; the `bloomfilter` package: 64-bit FNV-1a and enhanced double hashing):
 * `mayHold` is false only for a key never added, and true for a key never added with
 * probability about (1 − e^(−k·n/m))^k for n keys in m bits and k probes. A rebuild adds
 * every key it writes to the new generation, whose tables start empty, so a key the filter
 * does not hold is a document that does not exist yet: no read of the store.
 *
 * Memory: `bits` / 8 bytes, fixed at construction (a power of two from 2^20 to 2^27 bits:
 * 128 KiB to 16 MiB); more keys than bits / 8 raise the false-positive rate, never give a
 * wrong answer. Cost: one pass over the key's characters and K_PROBES bit probes.
 */
export class KeyFilter {
  private readonly filter: BloomFilter

  /** `expectedKeys`: keys the filter should hold at about 8 bits each (clamped to the sizes above). */
  constructor(expectedKeys: number) {
    let bits = MIN_BITS
    while (bits < MAX_BITS && bits < expectedKeys * 8) bits *= 2
    this.filter = new BloomFilter(bits, K_PROBES)
  }

  /** The filter's size in bits (m). */
  get bits(): number {
    return this.filter.m
  }

  add(key: string): void {
    this.filter.add(key)
  }

  /** False when `key` was never added; true when it was (and, rarely, when it was not). */
  mayHold(key: string): boolean {
    return this.filter.test(key)
  }
}

/** Probes per key (k): the best for 8 bits a key is about 5.5; 4 costs less and gives about 2.4% false positives. */
export const K_PROBES = 4
const MIN_BITS = 2 ** 20
const MAX_BITS = 2 ** 27
