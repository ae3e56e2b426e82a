import { randomFillSync } from 'node:crypto'

/** Bytes drawn from the OS's CSPRNG at once: one system call per 4 KiB of randomness instead of one per value. */
const pool = Buffer.alloc(4096)
let taken = pool.length

/**
 * `n` fresh random bytes (1 to 256) from the process's pool of CSPRNG output, refilled
 * with `crypto.randomFillSync` when spent; each byte is handed out once. For the many
 * small values a request draws (UUIDv7 ids, AES-GCM IVs), where a system call each cost
 * more than the value's use. @returns a copy (the caller may keep it).
 * @throws RangeError for n outside 1..256.
 */
export function randomBytesPooled(n: number): Buffer {
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new RangeError(`randomBytesPooled: ${n} bytes`)
  if (taken + n > pool.length) {
    randomFillSync(pool)
    taken = 0
  }
  const bytes = Buffer.from(pool.subarray(taken, taken + n))
  taken += n
  return bytes
}
