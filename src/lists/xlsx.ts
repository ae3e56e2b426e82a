import { posix } from 'node:path'
import yauzl, { type Entry, type ZipFile } from 'yauzl'
import { ListFileError, type Cell, type FileLimits, type Row } from './file-limits.ts'
import { attribute, local, parsePart, parseWhole, relationships, type Read, type SaxHandlers } from './xlsx-xml.ts'
import { StringTable, sharedStringsOf, stringItemCollector } from './xlsx-strings.ts'

/**
 * The rows of an XLSX workbook's first worksheet (ECMA-376 Part 1, SpreadsheetML §18),
 * read with every bound of `FileLimits` held. yauzl reads the zip from its central
 * directory (so the parts are taken in the order they are needed, whatever their order in
 * the archive: no worksheet is ever set aside in a temporary file), refuses entry sizes that
 * lie, and the declared sizes of the parts read are counted against the inflation budget
 * before one byte is inflated. saxes parses the XML as it inflates (no DTD, no entity but
 * XML's five: nothing expands), while the nesting depth, the length of every token and
 * the shared-strings table are counted.
 *
 * Why not exceljs's streaming reader, which this replaces: it writes every worksheet that
 * precedes `sharedStrings.xml` in the archive (Excel's own order) to the temporary
 * directory in clear and never removes it, caches the shared strings without a bound, and
 * follows any nesting.
 */

/** A workbook opened for its first worksheet: `rows()` may be called more than once (each call reads the sheet again). */
export interface Workbook {
  rows(): AsyncGenerator<Row>
  close(): void
}

/** The relationship types used to find the parts (ECMA-376 Part 1 §15.2; the strict variant's URIs end alike). */
const REL = {
  document: '/officeDocument',
  worksheet: '/worksheet',
  sharedStrings: '/sharedStrings',
  styles: '/styles'
} as const

/** Excel's last row (1,048,576) and column (XFD, 16,384) — ECMA-376 Part 1 §18.3.1.73 and §18.3.1.4. */
const EXCEL_ROWS = 1_048_576
const EXCEL_COLUMNS = 16_384

/**
 * Opens `source` (the file's bytes, or a path read from its file) as a workbook.
 * @throws ListFileError `malformed_file` (not a zip, no workbook or worksheet, a broken
 *   part), `xlsx_too_large`, `expands_too_much`, `too_deep`, `cell_too_large`.
 */
export async function openWorkbook(source: Buffer | string, limits: FileLimits): Promise<Workbook> {
  if (typeof source !== 'string' && source.length > limits.xlsx_bytes)
    throw new ListFileError('xlsx_too_large', `an XLSX file may hold ${limits.xlsx_bytes} bytes; this one holds ${source.length}: save it as CSV`)
  let zip: ZipFile
  try {
    const options = { lazyEntries: true, autoClose: false, strictFileNames: false, validateEntrySizes: true }
    zip = typeof source === 'string' ? await yauzl.openPromise(source, options) : await yauzl.fromBufferPromise(source, options)
  } catch (err) {
    throw new ListFileError('malformed_file', `the file is not a readable XLSX workbook (${(err as Error).message})`)
  }
  try {
    const parts = await entriesOf(zip, limits)
    const budget = { left: limits.inflated_bytes }
    const read = async (name: string, sax: SaxHandlers): Promise<void> => {
      const entry = parts.get(name.toLowerCase())
      if (!entry) throw new ListFileError('malformed_file', `the workbook names a part it does not hold (${name})`)
      await parseWhole(zip, entry, sax, limits)
    }
    const charge = (name: string | null): void => {
      const entry = name === null ? undefined : parts.get(name.toLowerCase())
      if (!entry) return
      budget.left -= entry.uncompressedSize
      if (budget.left < 0)
        throw new ListFileError(
          'expands_too_much',
          `the workbook's parts inflate to more than ${limits.inflated_bytes} bytes (${entry.fileName} alone to ${entry.uncompressedSize})`
        )
    }
    const documentPath = (await relationships(read, parts, '_rels/.rels', '')).find(r => r.type.endsWith(REL.document))?.target ?? 'xl/workbook.xml'
    const base = posix.dirname(documentPath)
    const rels = await relationships(read, parts, `${base}/_rels/${posix.basename(documentPath)}.rels`, base)
    charge(documentPath)
    const book = await workbookOf(read, documentPath)
    const sheetPath = rels.find(r => r.id === book.firstSheet && r.type.endsWith(REL.worksheet))?.target
    const sheet = sheetPath === undefined ? undefined : parts.get(sheetPath.toLowerCase())
    if (book.firstSheet === null || sheetPath === undefined || sheet === undefined) throw new ListFileError('malformed_file', 'the workbook holds no worksheet')
    const stylesPath = rels.find(r => r.type.endsWith(REL.styles))?.target ?? null
    const stringsPath = rels.find(r => r.type.endsWith(REL.sharedStrings))?.target ?? null
    charge(stylesPath)
    charge(stringsPath)
    charge(sheetPath)
    const dates = stylesPath !== null && parts.has(stylesPath.toLowerCase()) ? await dateStylesOf(read, stylesPath) : []
    const strings = stringsPath !== null && parts.has(stringsPath.toLowerCase()) ? await sharedStringsOf(read, stringsPath, limits) : new StringTable(limits)
    return {
      rows: () => sheetRows(zip, sheet, { strings, dates, date1904: book.date1904 }, limits),
      close: () => {
        zip.close()
      }
    }
  } catch (err) {
    zip.close()
    throw err
  }
}

/** The zip's entries by lower-cased name (parts are named case-insensitively, ECMA-376 Part 2 §9.1.1.1). */
async function entriesOf(zip: ZipFile, limits: FileLimits): Promise<Map<string, Entry>> {
  if (zip.entryCount > limits.zip_entries)
    throw new ListFileError('malformed_file', `the workbook's archive holds ${zip.entryCount} parts; a workbook may hold ${limits.zip_entries}`)
  const parts = new Map<string, Entry>()
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      parts.set(entry.fileName.toLowerCase(), entry)
      zip.readEntry()
    })
    zip.once('end', resolve)
    zip.once('error', (err: Error) => reject(new ListFileError('malformed_file', `the workbook's archive is broken (${err.message})`)))
    zip.readEntry()
  })
  return parts
}

/** The workbook's first sheet (its relationship id) and its date system (ECMA-376 Part 1 §18.2.28 `date1904`). */
async function workbookOf(read: Read, path: string): Promise<{ firstSheet: string | null; date1904: boolean }> {
  let firstSheet: string | null = null
  let date1904 = false
  await read(path, {
    open: tag => {
      const name = local(tag)
      if (name === 'sheet' && firstSheet === null) firstSheet = attribute(tag, 'id', true) ?? null
      else if (name === 'workbookPr') date1904 = ['1', 'true'].includes(attribute(tag, 'date1904') ?? '')
    }
  })
  return { firstSheet, date1904 }
}

/** Built-in number formats that show a date or a time (ECMA-376 Part 1 §18.8.30, ids 14–22 and 45–47). */
const BUILT_IN_DATES = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47])

/** Whether a format code shows a date or time: a d, m, y, h or s outside quotes, brackets (but elapsed [h]) and escapes. */
export function isDateFormat(code: string): boolean {
  const bare = code
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/\[(?![hms]+\])[^\]]*\]/gi, '')
    .split(';')[0]
  return /[dmyhs]/i.test(bare) && !/^general$/i.test(bare.trim())
}

/** For each cell format (`cellXfs`, by index), whether it shows a date. */
async function dateStylesOf(read: Read, path: string): Promise<boolean[]> {
  const custom = new Map<number, boolean>()
  const xfs: boolean[] = []
  let inCellXfs = false
  await read(path, {
    open: tag => {
      const name = local(tag)
      if (name === 'numFmt') custom.set(Number(attribute(tag, 'numFmtId')), isDateFormat(attribute(tag, 'formatCode') ?? ''))
      else if (name === 'cellXfs') inCellXfs = true
      else if (name === 'xf' && inCellXfs) {
        const id = Number(attribute(tag, 'numFmtId') ?? 0)
        xfs.push(custom.get(id) ?? BUILT_IN_DATES.has(id))
      }
    },
    close: tag => {
      if (local(tag) === 'cellXfs') inCellXfs = false
    }
  })
  return xfs
}

/** A column reference's index from 0 (`A` 0, `AA` 26), or null when it is not one. */
function columnIndex(ref: string): number | null {
  let n = 0
  let k = 0
  for (; k < ref.length; k++) {
    const c = ref.charCodeAt(k)
    if (c >= 65 && c <= 90) n = n * 26 + (c - 64)
    else if (c >= 97 && c <= 122) n = n * 26 + (c - 96)
    else break
    if (n > EXCEL_COLUMNS) return null
  }
  return k === 0 ? null : n - 1
}

/** A serial date as a Date: days since 1899-12-30, or since 1904-01-01 in the 1904 system (as exceljs reads them, so that kept files read as before). */
const serialDate = (serial: number, date1904: boolean): Date => new Date(Math.round((serial - (date1904 ? 24_107 : 25_569)) * 86_400_000))

interface SheetContext {
  strings: StringTable
  dates: boolean[]
  date1904: boolean
}

/**
 * The worksheet's rows, in order: a row number the sheet skips is an empty row (it is a
 * row of the file all the same), yielded one by one, never held as a list.
 * @throws ListFileError `too_many_rows`, `too_many_columns`, `malformed_file`, and those of `parsePart`.
 */
async function* sheetRows(zip: ZipFile, entry: Entry, ctx: SheetContext, limits: FileLimits): AsyncGenerator<Row> {
  // Rows finished by the chunk being parsed; a gap is a count, expanded as it is yielded.
  const ready: Array<Row | number> = []
  let rowNumber = 0
  let cells: Cell[] | null = null
  let column = -1
  let cell: { type: string; style: number; value: string[]; inV: boolean; inIs: boolean } | null = null
  const inline = stringItemCollector()
  let rows = 0
  const countRows = (n: number): void => {
    rows += n
    if (rows > limits.rows) throw new ListFileError('too_many_rows', `the file holds more than ${limits.rows} rows (empty ones included)`)
  }
  const value = (c: NonNullable<typeof cell>): Cell => {
    const v = c.value.join('')
    switch (c.type) {
      case 's': {
        if (v === '') return null
        const text = ctx.strings.get(Number(v))
        if (text === undefined) throw new ListFileError('malformed_file', `a cell names shared string ${v}, which the workbook does not hold`)
        return text
      }
      case 'inlineStr':
        return inline.take()
      case 'str':
      case 'e':
        return v
      case 'b':
        return v === '' ? null : v === '1' || v === 'true'
      case 'd': {
        const d = new Date(v)
        return Number.isNaN(d.getTime()) ? v : d
      }
      default: {
        if (v === '') return null
        const n = Number(v)
        if (Number.isNaN(n)) return v
        return ctx.dates[c.style] === true ? serialDate(n, ctx.date1904) : n
      }
    }
  }
  const handlers: SaxHandlers = {
    open: tag => {
      const name = local(tag)
      if (cell !== null) {
        if (name === 'v') cell.inV = true
        else if (name === 'is') cell.inIs = true
        else if (cell.inIs) inline.open(name)
        return
      }
      if (name === 'row') {
        const r = attribute(tag, 'r')
        const n = r === undefined ? rowNumber + 1 : Number(r)
        if (!Number.isInteger(n) || n <= rowNumber || n > EXCEL_ROWS)
          throw new ListFileError('malformed_file', `a row is numbered ${r}, after row ${rowNumber}`)
        countRows(n - rowNumber)
        if (n - rowNumber > 1) ready.push(n - rowNumber - 1)
        rowNumber = n
        cells = []
        column = -1
      } else if (name === 'c' && cells !== null) {
        const ref = attribute(tag, 'r')
        const k = ref === undefined ? column + 1 : columnIndex(ref)
        if (k === null || k <= column) throw new ListFileError('malformed_file', `a cell is referenced as ${ref} in row ${rowNumber}`)
        if (k >= limits.columns)
          throw new ListFileError('too_many_columns', `row ${rowNumber} has a cell in column ${k + 1}; a file may have ${limits.columns} columns`)
        column = k
        cell = { type: attribute(tag, 't') ?? 'n', style: Number(attribute(tag, 's') ?? 0), value: [], inV: false, inIs: false }
      }
    },
    close: tag => {
      const name = local(tag)
      if (cell !== null) {
        if (name === 'c') {
          const v = value(cell)
          if (v !== null) {
            while (cells!.length < column) cells!.push(null)
            cells!.push(v)
          }
          cell = null
        } else if (name === 'v') cell.inV = false
        else if (name === 'is') cell.inIs = false
        else if (cell.inIs) inline.close(name)
        return
      }
      if (name === 'row' && cells !== null) {
        ready.push({ cells })
        cells = null
      }
    },
    text: t => {
      if (cell === null) return
      if (cell.inV) cell.value.push(t)
      else if (cell.inIs) inline.text(t)
    }
  }
  // The rows finished by each chunk are handed on before the next chunk is parsed.
  for await (const _ of parsePart(zip, entry, handlers, limits)) {
    for (const r of ready) {
      if (typeof r === 'number') for (let k = 0; k < r; k++) yield { cells: [] }
      else yield r
    }
    ready.length = 0
  }
  for (const r of ready) {
    if (typeof r === 'number') for (let k = 0; k < r; k++) yield { cells: [] }
    else yield r
  }
}
