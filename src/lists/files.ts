import { createReadStream, createWriteStream, openSync, readSync, closeSync, renameSync, rmSync, statSync } from 'node:fs'
import { Transform, type Readable, type TransformCallback, type Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { extname } from 'node:path'
import { domainToASCII } from 'node:url'
import { parse } from 'csv-parse'
import { stringify } from 'csv-stringify'
import Papa from 'papaparse'

/**
 * A customer's list file, read and written as a stream (issue "Lists at leader parity",
 * items 1 and 2): CSV and TSV (delimiter, quoting, byte-order mark and line ending
 * detected; csv-parse reads, csv-stringify writes), plain text (one address a line) and
 * XLSX (exceljs's streaming reader and writer, first worksheet). Memory holds one row (and,
 * for XLSX, the workbook's shared strings), never the file.
 */

/** A cell as read: text from CSV and text files; XLSX keeps numbers, booleans and dates as they are typed. */
export type Cell = string | number | boolean | Date | null

/** One row of the input: its cells, or the raw text of a record that could not be parsed. */
export interface Row {
  cells: Cell[]
  unparsable?: boolean
}

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

/** exceljs, loaded when a workbook is read or written (it weighs some 35 MB of memory: a CSV run does without). */
type ExcelJSModule = typeof import('exceljs')
type CellValue = import('exceljs').CellValue
const excel = async (): Promise<ExcelJSModule> => (await import('exceljs')).default as unknown as ExcelJSModule

/** Cell values of an exceljs row (1-based, sparse), as the file holds them: a formula's result, a hyperlink's text, rich text joined. */
function xlsxCells(values: CellValue[] | Record<string, CellValue>): Cell[] {
  const list = Array.isArray(values) ? values.slice(1) : Object.values(values)
  return Array.from(list, v => {
    if (v === null || v === undefined) return null
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date) return v
    if (typeof v === 'object') {
      if ('richText' in v) return v.richText.map(r => r.text).join('')
      if ('hyperlink' in v && 'text' in v)
        return typeof v.text === 'string' ? v.text : (v.text as { richText: Array<{ text: string }> }).richText.map(r => r.text).join('')
      if ('result' in v) {
        const r = v.result
        return r === undefined || r === null ? null : r instanceof Date || typeof r !== 'object' ? r : String((r as { error?: string }).error ?? '')
      }
      if ('error' in v) return String(v.error)
    }
    return String(v)
  })
}

/**
 * The rows of `path`, in order, streamed. CSV: a record broken beyond repair (a quote never
 * closed) comes back as unparsable rows of its raw lines, and reading goes on; empty lines
 * are rows of one empty cell. Text: every line is a row of one cell. XLSX: the first
 * worksheet's rows, empty rows included.
 */
export async function* readRows(from: string | (() => Readable), layout: Layout): AsyncGenerator<Row> {
  const open = (options?: { start?: number; encoding?: BufferEncoding }): Readable => (typeof from === 'string' ? createReadStream(from, options) : from())
  if (layout.format === 'xlsx') {
    const ExcelJS = await excel()
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(typeof from === 'string' ? from : from(), {
      worksheets: 'emit',
      sharedStrings: 'cache',
      hyperlinks: 'ignore',
      styles: 'cache',
      entries: 'ignore'
    })
    for await (const sheet of reader) {
      let next = 1
      for await (const row of sheet) {
        // The reader skips empty rows; they are rows of the file all the same.
        for (; next < row.number; next++) yield { cells: [] }
        next = row.number + 1
        yield { cells: xlsxCells(row.values) }
      }
      return
    }
    return
  }
  if (layout.format === 'txt') {
    const lines = createInterface({
      input: typeof from === 'string' ? open({ encoding: 'utf8', start: layout.bom ? 3 : 0 }) : from().pipe(new TextDecoderStreamless(layout.bom)),
      crlfDelay: Infinity
    })
    for await (const line of lines) yield { cells: [line] }
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
    raw: true,
    // A record that cannot be parsed stays in the list, as its raw lines, marked.
    on_skip: (err, raw) => {
      const text = raw ?? (err as { raw?: string } | undefined)?.raw ?? ''
      for (const line of text.split(/\r?\n/).filter((l, k, all) => l !== '' || k < all.length - 1)) parser.push({ unparsable: line })
      return undefined
    }
  })
  open()
    .on('error', err => parser.destroy(err))
    .pipe(parser)
  for await (const record of parser as AsyncIterable<{ record: string[] } | { unparsable: string }>) {
    if ('unparsable' in record) yield { cells: [record.unparsable], unparsable: true }
    else yield { cells: record.record }
  }
}

/** Text from bytes, a leading byte-order mark dropped (readline over a stream that is not a file). */
class TextDecoderStreamless extends Transform {
  private first = true
  private readonly decoder = new StringDecoder('utf8')
  private readonly bom: boolean
  constructor(bom: boolean) {
    super({ decodeStrings: true, encoding: 'utf8' })
    this.bom = bom
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let text = this.decoder.write(chunk)
    if (this.first && text.length > 0) {
      if (this.bom && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      this.first = false
    }
    done(null, text)
  }

  override _flush(done: TransformCallback): void {
    done(null, this.decoder.end())
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

/**
 * The de-duplication key of an address: trimmed, NFC, lower-cased, the domain in ASCII
 * (IDNA, RFC 5891). It merges at least what the service merges (the service keeps the
 * local part's case), so every address sent is new to the batch; `Jane@x.com` after
 * `jane@x.com` is a duplicate row here.
 */
export function addressKey(text: string): string {
  const t = text.trim().normalize('NFC')
  const at = t.lastIndexOf('@')
  if (at <= 0 || at === t.length - 1) return `~${t.toLowerCase()}`
  const domain = t.slice(at + 1).toLowerCase()
  return `${t.slice(0, at).toLowerCase()}@${domainToASCII(domain) || domain}`
}

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
 * @throws Error naming the columns when `column` names none of them.
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
    throw new Error(`no column "${column}"${header ? ` (the columns: ${header.join(', ')})` : " (the file has no header: give the column's number, from 1)"}`)
  }
  const width = Math.max(1, ...data.map(r => r.cells.length), header?.length ?? 0)
  const score = Array.from({ length: width }, (_, i) => data.filter(r => ADDRESS_LIKE.test(cellText(r.cells[i] ?? null).trim())).length)
  const best = Math.max(...score)
  if (best > 0) return { header, column: score.indexOf(best) }
  const named = header?.findIndex(h => /e-?mail|courriel|address|adresse/i.test(h)) ?? -1
  return { header, column: Math.max(named, 0) }
}

/** A file being written: rows in, then `close` (which puts it in place) or `abort` (which leaves nothing). */
export interface RowWriter {
  write: (cells: Cell[]) => Promise<void>
  close: () => Promise<void>
  abort: () => Promise<void>
}

/**
 * Writes rows to `path` in `layout` (CSV with its delimiter, line ending and byte-order
 * mark; XLSX with typed cells), through a temporary file beside it that `close` renames
 * into place: a reader never sees half a file, and a failure leaves the old one.
 */
export async function openWriter(path: string, layout: Layout, sheetName = 'Results'): Promise<RowWriter> {
  const partial = `${path}.partial`
  const file = createWriteStream(partial)
  let failed: Error | null = null
  file.on('error', err => {
    failed = err
  })
  const rows = await streamWriter(file, layout, sheetName)
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
 * delimiter, line ending and byte-order mark, or XLSX streamed by exceljs. `close` ends the
 * stream; `abort` destroys it (the reader sees a broken download, not a short file).
 */
export async function streamWriter(target: Writable, layout: Layout, sheetName = 'Results'): Promise<RowWriter> {
  if (layout.format === 'xlsx') {
    const ExcelJS = await excel()
    const book = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: target, useStyles: true, useSharedStrings: false })
    const sheet = book.addWorksheet(sheetName)
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
  const csv = stringify({
    delimiter: layout.delimiter,
    record_delimiter: layout.newline === '\r\n' ? 'windows' : 'unix',
    bom: layout.bom,
    cast: { date: d => d.toISOString(), boolean: b => (b ? 'true' : 'false') }
  })
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
