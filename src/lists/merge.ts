import { addressKey, cellText, type Cell, type Row, type RowWriter } from './files.ts'

/**
 * A list's rows with their results: the same for
 * `svc verify-file` and for the console's stored files. Every input row goes out, in
 * order, with all of its columns and then the result columns; a duplicate row carries its
 * first occurrence's result; an empty or unparsable row stays, marked; a row without a
 * result yet says `pending`.
 */

/**
 * A result's flags as columns of their own, true or false, in both downloads (a list's file
 * with its results, and a batch's results as CSV): the result vocabulary's flags
 * (src/verifier/vocabulary.ts, held equal by test/lists/result-columns.test.ts).
 */
export const FLAG_COLUMNS = ['free', 'role', 'disposable', 'accept_all', 'mailbox_full', 'possible_typo'] as const

/** The result columns added to every row, in this order (the result vocabulary's names), then `row_status`. */
const RESULT_COLUMNS = ['verdict', 'reason', 'score', ...FLAG_COLUMNS, 'did_you_mean', 'mx_host', 'smtp_provider', 'checked_at', 'row_status'] as const
/** The result columns of outputs written before `mailbox_full` and `possible_typo` had theirs: such a file read again has them replaced too. */
const EARLIER_RESULT_COLUMNS = RESULT_COLUMNS.filter(c => c !== 'mailbox_full' && c !== 'possible_typo')
export const VERDICTS = ['valid', 'risky', 'invalid', 'unknown'] as const
export type Verdict = (typeof VERDICTS)[number]
/** What a row of the output is: verified (it has a result), a duplicate of an earlier row, empty (no address), unparsable, or pending (not verified yet). */
type RowStatus = 'verified' | 'duplicate' | 'empty' | 'unparsable' | 'pending'

/** One address's result as a list keeps it (flags space-separated). */
export interface StoredResult {
  verdict: string
  reason: string
  score: number | null
  flags: string
  did_you_mean: string | null
  mx_host: string | null
  smtp_provider: string | null
  checked_at: string | null
}

/** The result columns of a result (flags as booleans), or empty ones with the row's status. */
function resultCells(r: StoredResult | null, status: RowStatus): Cell[] {
  if (r === null) return [...RESULT_COLUMNS.slice(0, -1).map(() => ''), status]
  const flags = r.flags === '' ? [] : r.flags.split(' ')
  return [
    r.verdict,
    r.reason,
    r.score,
    ...FLAG_COLUMNS.map(f => flags.includes(f)),
    r.did_you_mean ?? '',
    r.mx_host ?? '',
    r.smtp_provider ?? '',
    r.checked_at ?? '',
    status
  ]
}

/** How a list is laid out: its header (null: none), the address column, the widest row. */
export interface ListShape {
  header: string[] | null
  column: number
  width: number
}

/**
 * The columns of the output: the input's (named `column_<n>` where the header has no name),
 * then the result columns. A file that is itself an output has its result columns
 * replaced, not repeated: `keep` lists the input columns that go out.
 */
function outputColumns(shape: ListShape): { names: string[]; keep: number[] } {
  const names = Array.from({ length: shape.width }, (_, i) => shape.header?.[i] || `column_${i + 1}`)
  const previous = shape.header !== null && EARLIER_RESULT_COLUMNS.every(c => names.includes(c))
  const ours = new Set<string>(RESULT_COLUMNS)
  const keep = names.map((_, i) => i).filter(i => !(previous && ours.has(names[i])))
  return { names: [...keep.map(i => names[i]), ...RESULT_COLUMNS], keep }
}

/** Where rows go: every row to `all` (filtered by `only`), and to `split(key)` by verdict (`unverified` for rows without one). */
export interface MergeTargets {
  all?: RowWriter
  only?: readonly Verdict[]
  split?: (key: Verdict | 'unverified') => Promise<RowWriter>
}

/** How a merge finds a row's result: the id of its address (a number per unique address; null when unknown) and the result of that id. */
export interface MergeLookup {
  idOf: (key: string) => number | null
  result: (id: number) => StoredResult | null
}

export interface MergeCounts {
  verified_rows: number
  pending_rows: number
  duplicate_rows: number
  empty_rows: number
  unparsable_rows: number
  by_verdict: Record<Verdict, number>
}

/**
 * Writes `rows` (the header row first when the list has one) with their results to the
 * targets, the header line first. A row's address is its `column` cell, looked up by its
 * de-duplication key (`addressKey`); the first row of an address is `verified` (or
 * `pending`), the next ones `duplicate`. Memory: a bit per unique address.
 */
export async function mergeRows(
  rows: AsyncIterable<Row>,
  shape: ListShape,
  lookup: MergeLookup,
  targets: MergeTargets,
  onRow?: (n: number) => void
): Promise<MergeCounts> {
  const { names, keep } = outputColumns(shape)
  if (targets.all) await targets.all.write(names)
  const counts: MergeCounts = {
    verified_rows: 0,
    pending_rows: 0,
    duplicate_rows: 0,
    empty_rows: 0,
    unparsable_rows: 0,
    by_verdict: { valid: 0, risky: 0, invalid: 0, unknown: 0 }
  }
  let seen = new Uint8Array(1024)
  const firstTime = (id: number): boolean => {
    if (id >> 3 >= seen.length) {
      const grown = new Uint8Array(Math.max(seen.length * 2, (id >> 3) + 1))
      grown.set(seen)
      seen = grown
    }
    const was = (seen[id >> 3] & (1 << (id & 7))) !== 0
    seen[id >> 3] |= 1 << (id & 7)
    return !was
  }
  let n = 0
  for await (const row of rows) {
    if (n++ === 0 && shape.header !== null) continue
    let status: RowStatus
    let result: StoredResult | null = null
    if (row.unparsable) status = 'unparsable'
    else {
      const text = cellText(row.cells[shape.column] ?? null).trim()
      const id = text === '' ? null : lookup.idOf(addressKey(text))
      if (id === null) status = text === '' ? 'empty' : 'pending'
      else {
        result = lookup.result(id)
        status = !firstTime(id) && result !== null ? 'duplicate' : result === null ? 'pending' : 'verified'
      }
    }
    counts[`${status}_rows`]++
    const verdict = result?.verdict as Verdict | undefined
    if (verdict !== undefined) counts.by_verdict[verdict]++
    const cells: Cell[] = [...keep.map(i => row.cells[i] ?? null), ...resultCells(result, status)]
    if (targets.all && (targets.only === undefined || (verdict !== undefined && targets.only.includes(verdict)))) await targets.all.write(cells)
    if (targets.split) await (await targets.split(verdict ?? 'unverified')).write(cells)
    if (n % 10_000 === 0) onRow?.(n)
  }
  onRow?.(n)
  return counts
}

/** A header row for the split files (each its own writer): the output's column names. */
export function headerRow(shape: ListShape): Cell[] {
  return outputColumns(shape).names
}
