/**
 * A Bloom filter of document keys (Bloom 1970, "Space/time trade-offs in hash coding with
 * allowable errors"): `mayHold` is false only for a key never added, and true for a key
 * never added with probability about (1 − e^(−k·n/m))^k for n keys in m bits and k probes.
 * A rebuild adds every key it writes to the new generation, whose tables start empty, so a
 * key the filter does not hold is a document that does not exist yet: no read of the store.
 *
 * Memory: `bits` / 8 bytes, fixed at construction (a power of two from 2^20 to 2^27 bits:
 * 128 KiB to 16 MiB); more keys than bits / 8 raise the false-positive rate, never give a
 * wrong answer. Cost: K_PROBES bit probes over two 32-bit hashes of the key (double hashing,
 * Kirsch & Mitzenmacher 2006), one pass over its characters.
 */
export class KeyFilter {
  private readonly words: Uint32Array
  private readonly mask: number

  /** `expectedKeys`: keys the filter should hold at about 8 bits each (clamped to the sizes above). */
  constructor (expectedKeys: number) {
    let bits = MIN_BITS
    while (bits < MAX_BITS && bits < expectedKeys * 8) bits *= 2
    this.words = new Uint32Array(bits / 32)
    this.mask = bits - 1
  }

  /** The filter's size in bits (m). */
  get bits (): number { return this.mask + 1 }

  add (key: string): void {
    const [h1, h2] = hashes(key)
    for (let i = 0; i < K_PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & this.mask
      this.words[bit >>> 5] |= 1 << (bit & 31)
    }
  }

  /** False when `key` was never added; true when it was (and, rarely, when it was not). */
  mayHold (key: string): boolean {
    const [h1, h2] = hashes(key)
    for (let i = 0; i < K_PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & this.mask
      if ((this.words[bit >>> 5] & (1 << (bit & 31))) === 0) return false
    }
    return true
  }
}

/** Probes per key (k): the best for 8 bits a key is about 5.5; 4 costs less and gives about 2.4% false positives. */
export const K_PROBES = 4
const MIN_BITS = 2 ** 20
const MAX_BITS = 2 ** 27

/** FNV-1a (32-bit) and a second, independent multiplicative hash of the UTF-16 code units; the second is odd (it steps through every bit). */
function hashes (key: string): [number, number] {
  let h1 = 0x811c9dc5
  let h2 = 0x9e3779b9
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 0x01000193)
    h2 = Math.imul(h2 ^ c, 0x5bd1e995)
    h2 ^= h2 >>> 15
  }
  h1 ^= h1 >>> 16
  h1 = Math.imul(h1, 0x85ebca6b)
  h1 ^= h1 >>> 13
  return [h1 >>> 0, (h2 | 1) >>> 0]
}
