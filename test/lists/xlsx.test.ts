import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ExcelJS from 'exceljs'
import { openWorkbook, isDateFormat } from '../../src/lists/xlsx.ts'
import { LOCAL_FILE_LIMITS, ListFileError, type FileLimits, type Row } from '../../src/lists/file-limits.ts'
import { workbookParts, zip, type ZipPart } from '../support/zip.ts'

// The bounded XLSX reader on workbooks built
// part by part (ECMA-376 Part 1, SpreadsheetML): what each cell type reads as, the order of
// parts found from the relationships, and each bound with a limit small enough to meet.
// The oracles: the XML the test wrote, and exceljs reading the workbooks it wrote itself.

const rowsOf = async (file: Buffer | string, limits: FileLimits = LOCAL_FILE_LIMITS): Promise<Row[]> => {
  const book = await openWorkbook(file, limits)
  try {
    const rows: Row[] = []
    for await (const r of book.rows()) rows.push(r)
    return rows
  } finally {
    book.close()
  }
}
const refusal = async (t: Test, file: Buffer, limits: Partial<FileLimits>, reason: string): Promise<void> => {
  const thrown = await rowsOf(file, { ...LOCAL_FILE_LIMITS, ...limits }).then(
    () => null,
    (err: unknown) => err
  )
  t.ok(thrown instanceof ListFileError, `refused: ${String(thrown)}`)
  t.equal((thrown as ListFileError).reason, reason, String((thrown as Error | null)?.message))
}

/** Adds a relationship of the workbook (its `.rels`): `id` of `type` to `target`. */
function relate(parts: ZipPart[], id: string, type: string, target: string): void {
  const rels = parts.find(p => p.name === 'xl/_rels/workbook.xml.rels')!
  const relationship = `<Relationship Id="${id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/${type}" Target="${target}"/>`
  rels.data = Buffer.from(rels.data.toString().replace('</Relationships>', `${relationship}</Relationships>`))
}

t.test('cell types read as typed: shared, inline and rich strings, numbers, booleans, errors, formula text', async t => {
  const sheet = [
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="s"><v>1</v></c></row>',
    '<row r="2"><c r="A2" t="inlineStr"><is><t>in</t><r><t>line</t></r></is></c><c r="B2"><v>42.5</v></c><c r="C2" t="b"><v>1</v></c><c r="D2" t="e"><v>#N/A</v></c><c r="E2" t="str"><f>A1</f><v>calc</v></c></row>',
    '<row r="4"><c t="b"><v>0</v></c><c><v>-3</v></c></row>'
  ].join('')
  const strings = '<si><t>a@example.com</t></si><si><r><t>Ri</t></r><r><rPr><b/></rPr><t xml:space="preserve">ch </t></r><rPh><t>ignored</t></rPh></si>'
  const rows = await rowsOf(zip(workbookParts(sheet, strings)))
  t.same(
    rows.map(r => r.cells),
    [['a@example.com', null, 'Rich '], ['inline', 42.5, true, '#N/A', 'calc'], [], [false, -3]]
  )
})

t.test('dates by their cell format, in the 1900 and 1904 systems, as exceljs wrote them', async t => {
  const book = new ExcelJS.Workbook()
  const sheet = book.addWorksheet('S')
  sheet.addRow(['when', new Date(Date.UTC(2024, 1, 29, 12, 30))])
  sheet.getCell('C1').value = 45_000
  const file = Buffer.from(await book.xlsx.writeBuffer())
  const [row] = await rowsOf(file)
  t.same(row.cells, ['when', new Date(Date.UTC(2024, 1, 29, 12, 30)), 45_000], 'a date cell is a Date, a plain number stays a number')
  t.ok(isDateFormat('yyyy-mm-dd') && isDateFormat('[$-409]d/m/yy h:mm AM/PM') && isDateFormat('[h]:mm:ss'))
  t.notOk(isDateFormat('0.00') || isDateFormat('"days" 0') || isDateFormat('General') || isDateFormat('[Red]0'))
  // The 1904 system: serial 0 is 1904-01-01 (ECMA-376 Part 1 §18.17.4.1).
  const parts = workbookParts('<row r="1"><c r="A1" s="1"><v>0</v></c></row>', null).map(p =>
    p.name === 'xl/workbook.xml' ? { ...p, data: Buffer.from(p.data.toString().replace('<sheets>', '<workbookPr date1904="1"/><sheets>')) } : p
  )
  parts.push({
    name: 'xl/styles.xml',
    data: Buffer.from(
      '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs></styleSheet>'
    )
  })
  relate(parts, 'rId3', 'styles', 'styles.xml')
  t.same((await rowsOf(zip(parts)))[0].cells, [new Date(Date.UTC(1904, 0, 1))])
})

t.test('the first sheet is the workbook’s first, found through its relationships, whatever the archive’s order', async t => {
  const parts = workbookParts('<row r="1"><c r="A1" t="inlineStr"><is><t>second</t></is></c></row>', null)
  const wb = parts.find(p => p.name === 'xl/workbook.xml')!
  wb.data = Buffer.from(
    wb.data
      .toString()
      .replace('<sheet name="List" sheetId="1" r:id="rId1"/>', '<sheet name="First" sheetId="2" r:id="rId9"/><sheet name="List" sheetId="1" r:id="rId1"/>')
  )
  relate(parts, 'rId9', 'worksheet', '/xl/worksheets/Other.XML')
  const other: ZipPart = {
    name: 'xl/worksheets/other.xml',
    data: Buffer.from(
      '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row><c t="inlineStr"><is><t>first</t></is></c></row></sheetData></worksheet>'
    )
  }
  t.same(
    (await rowsOf(zip([other, ...parts.reverse()]))).map(r => r.cells),
    [['first']],
    'the part is named case-insensitively, the archive read backwards'
  )
})

t.test('every bound is held', async t => {
  const strings = Array.from({ length: 50 }, (_, i) => `<si><t>string number ${i}</t></si>`).join('')
  const one = '<row r="1"><c r="A1" t="s"><v>0</v></c></row>'
  await refusal(t, zip(workbookParts(one, strings)), { shared_count: 49 }, 'expands_too_much')
  await refusal(t, zip(workbookParts(one, strings)), { shared_chars: 500 }, 'expands_too_much')
  await refusal(t, zip(workbookParts(one, strings)), { inflated_bytes: 1_000 }, 'expands_too_much')
  await refusal(t, zip(workbookParts(one, strings)), { xlsx_bytes: 500 }, 'xlsx_too_large')
  await refusal(t, zip(workbookParts(one, strings)), { zip_entries: 3 }, 'malformed_file')
  await refusal(
    t,
    zip(workbookParts(`<row r="1"><c r="A1" t="inlineStr"><is><t>${'x'.repeat(5_000)}</t></is></c></row>`, null)),
    { token_chars: 4_096 },
    'cell_too_large'
  )
  await refusal(t, zip(workbookParts(`<row r="1"><c r="A1" t="inlineStr"><is><t>${'<i>'.repeat(20)}`, null)), { depth: 16 }, 'too_deep')
  await refusal(t, zip(workbookParts('<row r="3"><c r="E3"><v>1</v></c></row>', null)), { columns: 4 }, 'too_many_columns')
  await refusal(t, zip(workbookParts('<row r="11"><c r="A11"><v>1</v></c></row>', null)), { rows: 10 }, 'too_many_rows')
  const rows = await rowsOf(zip(workbookParts('<row r="10"><c r="A10"><v>1</v></c></row>', null)), { ...LOCAL_FILE_LIMITS, rows: 10 })
  t.equal(rows.length, 10, 'at the bound: the skipped rows are rows')
  t.same(rows[9].cells, [1])
  await refusal(t, zip(workbookParts('<row r="2"/><row r="1"/>', null)), {}, 'malformed_file')
  await refusal(t, zip(workbookParts('<row r="1"><c r="B1"><v>1</v></c><c r="A1"><v>2</v></c></row>', null)), {}, 'malformed_file')
  await refusal(t, zip(workbookParts('<row r="1"><c r="A1"><v>&custom;</v></c></row>', null)), {}, 'malformed_file')
  const noSheet = workbookParts(one, strings).filter(p => p.name !== 'xl/worksheets/sheet1.xml')
  await refusal(t, zip(noSheet), {}, 'malformed_file')
})

t.test('an entity declared in a DTD is not expanded (no billion laughs)', async t => {
  const dtd = '<!DOCTYPE lol [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
  const parts = workbookParts('<row r="1"><c r="A1" t="inlineStr"><is><t>&b;</t></is></c></row>', null)
  const sheet = parts.find(p => p.name === 'xl/worksheets/sheet1.xml')!
  sheet.data = Buffer.from(sheet.data.toString().replace('?>', `?>${dtd}`))
  await refusal(t, zip(parts), {}, 'malformed_file')
})

t.test('a workbook is read from its file too (the command line), and twice over', async t => {
  const dir = t.testdir()
  const file = join(dir, 'list.xlsx')
  writeFileSync(file, zip(workbookParts('<row r="1"><c r="A1" t="inlineStr"><is><t>a@b.com</t></is></c></row>', null)))
  const book = await openWorkbook(file, LOCAL_FILE_LIMITS)
  const read = async (): Promise<unknown[]> => {
    const out: unknown[] = []
    for await (const r of book.rows()) out.push(r.cells)
    return out
  }
  t.same(await read(), [['a@b.com']])
  t.same(await read(), [['a@b.com']], 'the sheet read a second time')
  book.close()
})
