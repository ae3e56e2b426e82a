import { createHash } from 'node:crypto'

/**
 * Blind indexes as a sorted run: the 64-bit value of each as (high, low) 32-bit pairs in
 * one array, ascending. A set of strings would cost about 50 bytes an item (50 MB for a
 * batch of a million, twice that while runs merge).
 */
export type HashRun = Uint32Array

/** The value of a lower-case hex digit, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  if (c >= 97 && c <= 102) return c - 87
  return -1
}

/** Eight hex digits of `text` from `at` as a 32-bit value, or -1 when one is not a lower-case hex digit. */
function hex32(text: string, at: number): number {
  let v = 0
  for (let k = at; k < at + 8; k++) {
    const d = hexDigit(text.charCodeAt(k))
    if (d < 0) return -1
    v = v * 16 + d
  }
  return v
}

/**
 * The 64 bits of a blind index (16 lower-case hex digits, as the handler makes them) as
 * (high, low); any other text by the first 8 bytes of its SHA-256. Read digit by digit:
 * a chunk of 50,000 reads 50,000 of them, and this is a fifth of a regular expression and
 * two `parseInt`s.
 */
function bitsOf(hash: string): [number, number] {
  if (hash.length === 16) {
    const hi = hex32(hash, 0)
    const lo = hi < 0 ? -1 : hex32(hash, 8)
    if (lo >= 0) return [hi, lo]
  }
  const digest = createHash('sha256').update(hash).digest()
  return [digest.readUInt32BE(0), digest.readUInt32BE(4)]
}

/**
 * The blind indexes as one sorted run: each as one 64-bit integer, sorted by the typed
 * array's own numeric sort (a tenth of sorting pairs with a comparator at 50,000), then
 * split back into (high, low).
 */
function runOf(hashes: readonly string[]): HashRun {
  const values = new BigUint64Array(hashes.length)
  for (let k = 0; k < hashes.length; k++) {
    const [hi, lo] = bitsOf(hashes[k])
    values[k] = (BigInt(hi) << 32n) | BigInt(lo)
  }
  values.sort()
  const run = new Uint32Array(values.length * 2)
  for (let k = 0; k < values.length; k++) {
    run[2 * k] = Number(values[k] >> 32n)
    run[2 * k + 1] = Number(values[k] & 0xffffffffn)
  }
  return run
}

/** Two runs as one, ascending. */
function merge(a: HashRun, b: HashRun): HashRun {
  const out = new Uint32Array(a.length + b.length)
  let i = 0
  let j = 0
  let k = 0
  while (i < a.length && j < b.length) {
    if (a[i] < b[j] || (a[i] === b[j] && a[i + 1] <= b[j + 1])) {
      out[k++] = a[i++]
      out[k++] = a[i++]
    } else {
      out[k++] = b[j++]
      out[k++] = b[j++]
    }
  }
  while (i < a.length) out[k++] = a[i++]
  while (j < b.length) out[k++] = b[j++]
  return out
}

/** Binary search of one run. */
function inRun(run: HashRun, hi: number, lo: number): boolean {
  let low = 0
  let high = run.length / 2 - 1
  while (low <= high) {
    const mid = (low + high) >>> 1
    const h = run[2 * mid]
    const l = run[2 * mid + 1]
    if (h === hi && l === lo) return true
    if (h < hi || (h === hi && l < lo)) low = mid + 1
    else high = mid - 1
  }
  return false
}

/** Whether any of `runs` holds this blind index. Cost: a binary search in each run (at most log₂ of the items runs). */
export function runsHold(runs: readonly HashRun[], hash: string): boolean {
  const [hi, lo] = bitsOf(hash)
  return runs.some(run => inRun(run, hi, lo))
}

/** The runs with the part's items added: a new run, merged with the last while it is no smaller than it (a binary counter's carry). */
export function withRun(runs: readonly HashRun[], hashes: readonly string[]): readonly HashRun[] {
  const next = [...runs]
  let run = runOf(hashes)
  while (next.length > 0 && next[next.length - 1].length <= run.length) run = merge(next.pop()!, run)
  next.push(run)
  return next
}
