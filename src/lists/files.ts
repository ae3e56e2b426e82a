import { createReadStream, createWriteStream, openSync, readSync, closeSync, renameSync, rmSync, statSync } from 'node:fs'
import type { Readable, Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { once } from 'node:events'
import { extname } from 'node:path'
import { parse } from 'csv-parse'
import { stringify, type Options as StringifyOptions } from 'csv-stringify'
import Papa from 'papaparse'
import { LOCAL_FILE_LIMITS, ListFileError, type Cell, type FileLimits, type Row } from './file-limits.ts'
import { openWorkbook } from './xlsx.ts'

export type { Cell, Row } from './file-limits.ts'

/**
 * A customer's list file, read and written as a stream: CSV and TSV (delimiter, quoting, byte-order mark and line ending
 * detected; csv-parse reads, csv-stringify writes), plain text (one address a line) and
 * XLSX (our bounded reader of the first worksheet, `xlsx.ts`; exceljs's streaming writer).
 * Memory holds one row (and, for XLSX, the file and its shared strings), never a CSV file;
 * every dimension of a file is bounded (`file-limits.ts`).
 */

export type ListFormat = 'csv' | 'txt' | 'xlsx'

/** How a file is laid out (what a writer of the same format reproduces). */
export interface Layout {
  format: ListFormat
  /** CSV: the field delimiter (`,` `;` tab `|`). */
  delimiter: string
  /** CSV and text: whether the file starts with a UTF-8 byte-order mark. */
  bom: boolean
  /** CSV and text: the line ending of its first line. */
  newline: '\n' | '\r\n'
}

/** The format a path names by its extension (`.xlsx`, `.txt`; anything else is CSV, `.tsv` tab-separated). */
export function formatOf(path: string): ListFormat {
  const ext = extname(path).toLowerCase()
  if (ext === '.xlsx') return 'xlsx'
  if (ext === '.txt') return 'txt'
  return 'csv'
}

const SAMPLE_BYTES = 64 * 1024

/**
 * Reads the start of `path` and says how it is laid out. XLSX is known by its zip
 * signature whatever its name; a CSV's delimiter is guessed by papaparse from its first
 * lines (`,` `;` tab `|`; a `.tsv` is tab-separated unless its lines say otherwise).
 * @throws Error with a sentence for a missing, unreadable or empty file, or an `.xls` one.
 */
export function layoutOf(path: string): Layout {
  let fd: number
  try {
    if (statSync(path).isDirectory()) throw new Error(`${path} is a directory, not a list file`)
    fd = openSync(path, 'r')
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    if (e.code === 'ENOENT') throw new Error(`no such file: ${path}`)
    if (e.code === 'EACCES') throw new Error(`cannot read ${path}: permission denied`)
    throw err
  }
  const buffer = Buffer.alloc(SAMPLE_BYTES)
  const read = readSync(fd, buffer, 0, SAMPLE_BYTES, 0)
  closeSync(fd)
  return layoutFromHead(buffer.subarray(0, read), read < SAMPLE_BYTES, path)
}

/**
 * The layout of a file from its first bytes (up to 64 KiB; `whole` when that is all of
 * it) and its name (`.txt`, `.tsv`). See `layoutOf`.
 * @throws Error for an Excel 97–2003 workbook (.xls).
 */
export function layoutFromHead(head: Buffer, whole: boolean, name: string): Layout {
  if (head.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) return { format: 'xlsx', delimiter: ',', bom: false, newline: '\n' }
  if (head.subarray(0, 8).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])))
    throw new Error(`${name} is an Excel 97–2003 workbook (.xls): save it as .xlsx or .csv`)
  const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf
  const text = head.toString('utf8', bom ? 3 : 0)
  const firstBreak = text.indexOf('\n')
  const newline = firstBreak > 0 && text[firstBreak - 1] === '\r' ? '\r\n' : '\n'
  if (formatOf(name) === 'txt') return { format: 'txt', delimiter: ',', bom, newline }
  // Whole lines only: a line cut by the sample's end would mislead the guess.
  const lines = !whole && text.lastIndexOf('\n') > 0 ? text.slice(0, text.lastIndexOf('\n')) : text
  const guessed = Papa.parse<string[]>(lines, { preview: 50, delimitersToGuess: [',', ';', '\t', '|'] })
  const found = guessed.errors.some(e => e.code === 'UndetectableDelimiter') ? null : guessed.meta.delimiter
  const delimiter = found ?? (extname(name).toLowerCase() === '.tsv' ? '\t' : ',')
  return { format: 'csv', delimiter, bom, newline }
}

/** exceljs, loaded when a workbook is written (it weighs some 35 MB of memory: a CSV run does without). */
type ExcelJSModule = typeof import('exceljs')
const excel = async (): Promise<ExcelJSModule> => (await import('exceljs')).default as unknown as ExcelJSModule

/**
 * The rows of a list, in order, streamed, within `limits` (rows, columns, the length of a
 * record). CSV: a record broken beyond repair (a quote never closed) comes back as
 * unparsable rows of its raw lines, and reading goes on; empty lines are rows of one empty
 * cell. Text: every line is a row of one cell. XLSX: the first worksheet's rows, empty rows
 * included (see `openWorkbook`); from a stream, the file is held whole, up to
 * `limits.xlsx_bytes` (its parts are found from the end).
 * @throws ListFileError for a file beyond a bound or unreadable (see `FileFault`).
 */
export async function* readRows(from: string | (() => Readable), layout: Layout, limits: FileLimits = LOCAL_FILE_LIMITS): AsyncGenerator<Row> {
  const open = (): Readable => (typeof from === 'string' ? createReadStream(from) : from())
  let rows = 0
  const counted = (row: Row): Row => {
    if (++rows > limits.rows) throw new ListFileError('too_many_rows', `the file holds more than ${limits.rows} rows (empty ones included)`)
    if (row.cells.length > limits.columns)
      throw new ListFileError('too_many_columns', `row ${rows} has ${row.cells.length} cells; a file may have ${limits.columns} columns`)
    return row
  }
  if (layout.format === 'xlsx') {
    const book = await openWorkbook(typeof from === 'string' ? from : await whole(open(), limits.xlsx_bytes), limits)
    try {
      // The workbook reader counts its rows and columns itself (skipped rows included).
      yield* book.rows()
    } finally {
      book.close()
    }
    return
  }
  if (layout.format === 'txt') {
    for await (const line of lines(open(), layout.bom, limits.record_chars)) yield counted({ cells: [line] })
    return
  }
  const parser = parse({
    delimiter: layout.delimiter,
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    skip_records_with_error: true,
    record_delimiter: ['\r\n', '\n', '\r'],
    max_record_size: limits.record_chars,
    raw: true,
    // A record that cannot be parsed stays in the list, as its raw lines, marked (one too long ends the reading).
    on_skip: (err, raw) => {
      if ((err as { code?: string } | undefined)?.code === 'CSV_MAX_RECORD_SIZE') {
        parser.destroy(new ListFileError('cell_too_large', `a record of the file is longer than ${limits.record_chars} characters`))
        return undefined
      }
      const text = raw ?? (err as { raw?: string } | undefined)?.raw ?? ''
      for (const line of text.split(/\r?\n/).filter((l, k, all) => l !== '' || k < all.length - 1)) parser.push({ unparsable: line })
      return undefined
    }
  })
  const input = open()
  input.on('error', err => parser.destroy(err))
  input.pipe(parser)
  try {
    for await (const record of parser as AsyncIterable<{ record: string[] } | { unparsable: string }>) {
      if ('unparsable' in record) yield counted({ cells: [record.unparsable], unparsable: true })
      else yield counted({ cells: record.record })
    }
  } finally {
    input.destroy()
  }
}

/** A stream's bytes in one buffer, refused past `max` bytes. @throws ListFileError `xlsx_too_large`. */
async function whole(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let n = 0
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      n += chunk.length
      if (n > max) throw new ListFileError('xlsx_too_large', `an XLSX file may hold ${max} bytes: save a larger one as CSV`)
      chunks.push(chunk)
    }
  } finally {
    stream.destroy()
  }
  return Buffer.concat(chunks, n)
}

/**
 * The lines of a text stream (LF or CRLF; a leading byte-order mark dropped when `bom`),
 * each at most `max` characters.
 * @throws ListFileError `cell_too_large` for a longer line.
 */
async function* lines(stream: Readable, bom: boolean, max: number): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8')
  let rest = ''
  let first = true
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let text = rest + decoder.write(chunk)
      if (first && text.length > 0) {
        if (bom && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
        first = false
      }
      let from = 0
      for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', from)) {
        yield text.slice(from, at > from && text.charCodeAt(at - 1) === 13 ? at - 1 : at)
        from = at + 1
      }
      rest = text.slice(from)
      if (rest.length > max) throw new ListFileError('cell_too_large', `a line of the file is longer than ${max} characters`)
    }
    rest += decoder.end()
    if (rest.length > 0) yield rest.endsWith('\r') ? rest.slice(0, -1) : rest
  } finally {
    stream.destroy()
  }
}

/** A loose shape of an address: something@something.tld, no spaces (the service judges the syntax for real). */
export const ADDRESS_LIKE = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/

/** A cell as text (a date as ISO 8601, a number as JavaScript writes it). */
export function cellText(c: Cell): string {
  if (c === null) return ''
  if (c instanceof Date) return c.toISOString()
  return String(c)
}

export { addressKey } from '../lib/address-key.ts'

/** What the first rows of a list say: whether the first row is a header, its column names, and which column holds addresses. */
export interface Shape {
  header: string[] | null
  column: number
}

/**
 * Decides the header and the address column from the first rows (up to 1,000): the first
 * row is a header unless one of its cells looks like an address; the address column is the
 * one whose values look most like addresses. `column` overrides: a header name (any case)
 * or a 1-based number.
 * @throws ListFileError `malformed_file` naming the columns when `column` names none of them.
 */
export function shapeOf(sample: readonly Row[], column?: string): Shape {
  const rows = sample.filter(r => !r.unparsable)
  const first = rows[0]?.cells ?? []
  const firstIsData = first.some(c => ADDRESS_LIKE.test(cellText(c).trim()))
  const header = rows.length === 0 || firstIsData ? null : first.map(c => cellText(c).trim())
  const data = header === null ? rows : rows.slice(1)
  if (column !== undefined) {
    const byName = header?.findIndex(h => h.toLowerCase() === column.trim().toLowerCase()) ?? -1
    if (byName >= 0) return { header, column: byName }
    const n = Number(column)
    if (Number.isInteger(n) && n >= 1) return { header, column: n - 1 }
    throw new ListFileError(
      'malformed_file',
      `no column "${column}"${header ? ` (the columns: ${header.join(', ')})` : " (the file has no header: give the column's number, from 1)"}`
    )
  }
  const width = Math.max(1, ...data.map(r => r.cells.length), header?.length ?? 0)
  const score = Array.from({ length: width }, (_, i) => data.filter(r => ADDRESS_LIKE.test(cellText(r.cells[i] ?? null).trim())).length)
  const best = Math.max(...score)
  if (best > 0) return { header, column: score.indexOf(best) }
  const named = header?.findIndex(h => /e-?mail|courriel|address|adresse/i.test(h)) ?? -1
  return { header, column: Math.max(named, 0) }
}

/**
 * Characters that make a spreadsheet read a cell as a formula when they lead it (OWASP
 * "CSV Injection": `=` `+` `-` `@`, tab, carriage return), with the full-width forms some
 * spreadsheets fold into them (as csv-stringify's own `escape_formulas` lists them).
 */
const FORMULA_LEAD = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/
/** A plain decimal number (`-5`, `+3.25`, `-1e3`): a spreadsheet reads it as a number, never as a formula. */
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/**
 * A text cell as a CSV we write holds it, neutralised (OWASP "CSV Injection"): a value
 * that starts with `=` `+` `-` `@`, a tab or a carriage return (or their full-width forms)
 * gets a leading `'`, which spreadsheets take as "this is text" and do not show, and is
 * enclosed in quotes. A plain number (`-5`, `+3.25`) is left as it is: it cannot run
 * anything and stays a number; an address such as `+1@x` or `-a@x` is neutralised.
 * @returns the value unchanged, or csv-stringify's per-field answer (the prefixed value, quoted).
 */
function neutraliseFormula(value: string): string | { value: string; quoted: true } {
  return FORMULA_LEAD.test(value) && !PLAIN_NUMBER.test(value) ? { value: `'${value}`, quoted: true } : value
}

/** How a CSV is written: what its layout says, and whether formula-like cells are neutralised (on unless asked otherwise). */
export interface CsvWriting {
  delimiter: string
  newline: '\n' | '\r\n'
  bom: boolean
  /** Neutralise cells a spreadsheet would run as formulas (see `neutraliseFormula`); default true. */
  formula_escape?: boolean
}

/**
 * csv-stringify's options for every CSV the service and the CLI write (issue 42, item 6):
 * RFC 4180's quoting whatever the file's line ending — a field holding the delimiter, a
 * quote, a CR or an LF is enclosed in quotes and its quotes doubled (`quote_record_delimiter`:
 * csv-stringify otherwise quotes only the line ending it writes, so a bare LF in a CRLF file
 * split its row) — and, unless `formula_escape` is false, formula-like text cells
 * neutralised (`neutraliseFormula`, through `cast.string`: headers and every text cell, the
 * customer's and ours). Dates are ISO 8601, booleans `true`/`false`, numbers as JavaScript
 * writes them.
 */
export function csvOptions(w: CsvWriting): StringifyOptions {
  return {
    delimiter: w.delimiter,
    record_delimiter: w.newline === '\r\n' ? 'windows' : 'unix',
    quote_record_delimiter: true,
    bom: w.bom,
    cast: {
      date: d => d.toISOString(),
      boolean: b => (b ? 'true' : 'false'),
      ...(w.formula_escape !== false && { string: neutraliseFormula })
    }
  }
}

/** What a writer is asked besides the layout: the XLSX sheet's name, and whether a CSV neutralises formula-like cells (default true). */
export interface WriterOptions {
  sheet_name?: string
  formula_escape?: boolean
}

/** A file being written: rows in, then `close` (which puts it in place) or `abort` (which leaves nothing). */
export interface RowWriter {
  write: (cells: Cell[]) => Promise<void>
  close: () => Promise<void>
  abort: () => Promise<void>
}

/**
 * Writes rows to `path` in `layout` (CSV with its delimiter, line ending and byte-order
 * mark, quoted and neutralised as `csvOptions` says; XLSX with typed cells), through a
 * temporary file beside it that `close` renames into place: a reader never sees half a
 * file, and a failure leaves the old one.
 */
export async function openWriter(path: string, layout: Layout, options: WriterOptions = {}): Promise<RowWriter> {
  const partial = `${path}.partial`
  const file = createWriteStream(partial)
  let failed: Error | null = null
  file.on('error', err => {
    failed = err
  })
  const rows = await streamWriter(file, layout, options)
  return {
    write: async cells => {
      if (failed) throw failed
      await rows.write(cells)
    },
    close: async () => {
      await rows.close()
      if (!file.closed) await once(file, 'close')
      if (failed) throw failed
      renameSync(partial, path)
    },
    abort: async () => {
      await rows.abort()
      file.destroy()
      rmSync(partial, { force: true })
    }
  }
}

/**
 * Writes rows into a stream (a download answered as it is written): CSV with the layout's
 * delimiter, line ending and byte-order mark, quoted per RFC 4180 and formula-like cells
 * neutralised unless `options.formula_escape` is false (`csvOptions`), or XLSX streamed by
 * exceljs, where a text cell is a string cell whatever it starts with (never a formula).
 * `close` ends the stream; `abort` destroys it (the reader sees a broken download, not a
 * short file).
 */
export async function streamWriter(target: Writable, layout: Layout, options: WriterOptions = {}): Promise<RowWriter> {
  if (layout.format === 'xlsx') {
    const ExcelJS = await excel()
    const book = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: target, useStyles: true, useSharedStrings: false })
    const sheet = book.addWorksheet(options.sheet_name ?? 'Results')
    return {
      write: async cells => {
        sheet.addRow(cells).commit()
      },
      close: async () => {
        sheet.commit()
        await book.commit()
      },
      abort: async () => {
        target.destroy(new Error('the file could not be written to the end'))
      }
    }
  }
  const csv = stringify(csvOptions({ ...layout, formula_escape: options.formula_escape }))
  csv.pipe(target)
  return {
    write: async cells => {
      if (!csv.write(cells.map(c => (c === null ? '' : c)))) await once(csv, 'drain')
    },
    close: async () => {
      csv.end()
      await once(csv, 'end')
    },
    abort: async () => {
      csv.unpipe(target)
      target.destroy(new Error('the file could not be written to the end'))
    }
  }
}
