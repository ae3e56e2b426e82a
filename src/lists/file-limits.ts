/**
 * What a list file may hold, and why one was refused: a file's shape — not only its size — can cost memory and time, so every
 * dimension a reader walks has a bound: rows (an XLSX's skipped rows included), the widest
 * row, the padded grid, one cell or record, XML nesting, the bytes an XLSX inflates to,
 * its shared-strings table and its parts. The numbers are in docs/security.md.
 */

/** A cell as read: text from CSV and text files; XLSX keeps numbers, booleans and dates as they are typed. */
export type Cell = string | number | boolean | Date | null

/** One row of the input: its cells, or the raw text of a record that could not be parsed. */
export interface Row {
  cells: Cell[]
  unparsable?: boolean
}

/** Why a file was refused: the reason of its problem code (`batch_source.<reason>`). */
export type FileFault =
  | 'xlsx_too_large'
  | 'expands_too_much'
  | 'too_deep'
  | 'too_many_columns'
  | 'too_many_rows'
  | 'too_many_cells'
  | 'cell_too_large'
  | 'malformed_file'

/** The HTTP status of each fault: 413 for what is too big, 422 for what cannot be read as a list. */
export const FAULT_STATUS: Readonly<Record<FileFault, 413 | 422>> = {
  xlsx_too_large: 413,
  expands_too_much: 413,
  too_deep: 422,
  too_many_columns: 422,
  too_many_rows: 422,
  too_many_cells: 422,
  cell_too_large: 422,
  malformed_file: 422
}

/** A list file refused for `reason`; `message` says what was found and what is allowed, in the customer's terms. */
export class ListFileError extends Error {
  readonly reason: FileFault
  constructor(reason: FileFault, message: string) {
    super(message)
    this.name = 'ListFileError'
    this.reason = reason
  }
}

/** The bounds a reader holds a file to. */
export interface FileLimits {
  /** Rows, the header, empty rows and an XLSX's skipped row numbers included. */
  rows: number
  /** Cells of the widest row. */
  columns: number
  /** Rows × the widest row: what a merge writes once every row is padded to the same width. */
  cells: number
  /** Characters of one CSV record or text line. */
  record_chars: number
  /** Characters of one XML token (a cell's text, a tag with its attributes) in an XLSX part. */
  token_chars: number
  /** Nesting of XML elements in an XLSX part. */
  depth: number
  /** Bytes of an XLSX held to be read (its parts are found by the zip's central directory, at the end). */
  xlsx_bytes: number
  /** Bytes the XLSX parts read may inflate to, all together (declared sizes, checked before inflating). */
  inflated_bytes: number
  /** Characters of the shared-strings table, all strings together. */
  shared_chars: number
  /** Strings of the shared-strings table. */
  shared_count: number
  /** Entries of the XLSX's zip. */
  zip_entries: number
}

const MiB = 1024 * 1024

/** The bounds that do not depend on the plan. */
const FIXED = {
  columns: 1_024,
  record_chars: MiB,
  token_chars: 256 * 1024,
  depth: 32,
  shared_chars: 64 * MiB,
  shared_count: 4 * MiB,
  zip_entries: 4_096
} as const

/** Bytes a kept XLSX may hold (it is held whole in the reading thread, for its central directory). */
const XLSX_MAX_BYTES = 64 * MiB

/**
 * The bounds of a kept file of `bytes` bytes, on a plan whose kept files may hold
 * `maxFileBytes` and whose batches `maxBatchSize` addresses: twice the batch plus 10,000
 * rows; 1,024 columns; a padded grid no larger than the plan's byte allowance in cells; an
 * XLSX of at most 64 MiB inflating to at most 40 times its size (at least 32 MiB, at most
 * 1 GiB).
 */
export function keptFileLimits(bytes: number, maxFileBytes: number, maxBatchSize: number): FileLimits {
  return {
    ...FIXED,
    rows: 2 * maxBatchSize + 10_000,
    cells: Math.max(4 * MiB, maxFileBytes),
    xlsx_bytes: Math.min(XLSX_MAX_BYTES, maxFileBytes),
    inflated_bytes: Math.min(1_024 * MiB, Math.max(32 * MiB, 40 * bytes))
  }
}

/**
 * The bounds of `svc verify-file` on the caller's own machine: Excel's own sheet (1,048,576
 * rows, 16,384 columns), a grid of 2^31 cells, an XLSX read from its file (no size held),
 * inflating to at most 4 GiB.
 */
export const LOCAL_FILE_LIMITS: FileLimits = {
  ...FIXED,
  rows: Number.MAX_SAFE_INTEGER,
  columns: 16_384,
  cells: 2 ** 31,
  xlsx_bytes: Number.MAX_SAFE_INTEGER,
  inflated_bytes: 4_096 * MiB
}
