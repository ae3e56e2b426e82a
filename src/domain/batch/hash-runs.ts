import { createHash } from 'node:crypto'

/**
 * Blind indexes as a sorted run: the 64-bit value of each as (high, low) 32-bit pairs in
 * one array, ascending. A set of strings would cost about 50 bytes an item (50 MB for a
 * batch of a million, twice that while runs merge).
 */
export type HashRun = Uint32Array

const HEX64 = /^[0-9a-f]{16}$/

/** The 64 bits of a blind index (16 hex digits, as the handler makes them); any other text by the first 8 bytes of its SHA-256. */
function bitsOf(hash: string): [number, number] {
  const hex = HEX64.test(hash) ? hash : createHash('sha256').update(hash).digest('hex').slice(0, 16)
  return [parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8, 16), 16)]
}

/** The blind indexes as one sorted run. */
function runOf(hashes: readonly string[]): HashRun {
  const pairs = hashes.map(bitsOf).sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const run = new Uint32Array(pairs.length * 2)
  pairs.forEach(([hi, lo], k) => {
    run[2 * k] = hi
    run[2 * k + 1] = lo
  })
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
