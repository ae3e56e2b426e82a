// A list's file kept beside its batch, through the
// API: uploaded once the batch exists, downloaded later with every row, its columns and
// the result columns, in its own format (CSV with its delimiter and BOM; XLSX as XLSX), or
// as uploaded; sealed at rest; nobody else's to read; removed on request, at the end of
// its retention (the service's clock moved), and with the account. The oracles: the bytes
// the test uploaded, the batch's results read back from the API, the files under DATA_DIR.
// This file owns 127.0.108.0/24.
import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import ExcelJS from 'exceljs'
import { startMailWorld } from '../../support/mail-world.ts'
import { client, record, signUp, startTestService, testConfig } from '../../support/service.ts'
import { waitUntil } from '../../support/eventstore-contract.ts'

const world = await startMailWorld({
  dns_ip: '127.0.108.1',
  domains: [{ name: 'kept-files.com', mx: [{ preference: 10, exchange: 'mx.kept-files.com' }] }],
  hosts: [
    {
      name: 'mx.kept-files.com',
      ip: '127.0.108.2',
      rcpt: a => (/^ok/.test(a) ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' })
    }
  ]
})
t.teardown(() => world.close())
const dataDir = t.testdir()
let clockOffset = 0
const service = await startTestService(
  testConfig(dataDir, { VERIFIER_DNS_SERVERS: world.dns_server, LIST_FILE_RETENTION_DAYS: '30', LIST_FILE_SWEEP_S: '0.2' }),
  { now: () => new Date(Date.now() + clockOffset) }
)
t.teardown(() => service.close())
const api = client(service.url)
const token = await signUp(api, dataDir, 'keeper@example.com')
const me = (await api('GET', '/api/users/me', { token })).body.uuid as string
const blobDir = (owner: string): string => join(dataDir, 'blobs', owner)

/** A completed batch of `emails` (the addresses as a client sends them: unique, in order). */
async function batchOf(emails: string[], name: string): Promise<string> {
  const r = await api('POST', '/api/batches', { token, body: { emails, final: true, name } })
  t.equal(r.status, 202)
  await waitUntil(async () => (await api('GET', `/api/batches/${String(r.body.uuid)}`, { token })).body.status === 'completed', 20_000)
  return r.body.uuid as string
}
async function upload(uuid: string, body: Buffer, type: string, query = ''): Promise<{ status: number; body: any }> {
  const r = await fetch(`${service.url}/api/batches/${uuid}/source${query}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': type },
    body: new Uint8Array(body)
  })
  record('PUT', `/api/batches/${uuid}/source`, r.status)
  return { status: r.status, body: await r.json().catch(() => null) }
}
const download = async (uuid: string, query = '', who = token): Promise<{ status: number; type: string | null; disposition: string | null; bytes: Buffer }> => {
  const r = await fetch(`${service.url}/api/batches/${uuid}/source${query}`, { headers: { authorization: `Bearer ${who}` } })
  record('GET', `/api/batches/${uuid}/source`, r.status)
  return { status: r.status, type: r.headers.get('content-type'), disposition: r.headers.get('content-disposition'), bytes: Buffer.from(await r.arrayBuffer()) }
}

t.test('a CSV kept and downloaded with its results: every row, its columns, its format', async t => {
  const csv = Buffer.from(
    '\uFEFFName;E-mail;Company\r\nJane;ok.jane@kept-files.com;"Acme; Inc."\r\nJohn;john@kept-files.com;Beta\r\n;;\r\nJane again;ok.jane@kept-files.com;Acme\r\n'
  )
  const uuid = await batchOf(['ok.jane@kept-files.com', 'john@kept-files.com'], 'crm.csv')
  const up = await upload(uuid, csv, 'text/csv', '?name=crm.csv')
  t.equal(up.status, 201, JSON.stringify(up.body))
  t.match(up.body, { name: 'crm.csv', format: 'csv', bytes: csv.length, column: null })
  t.equal(Date.parse(up.body.expires_at) - Date.parse(up.body.attached_at), 30 * 86_400_000, 'kept 30 days')
  t.match((await api('GET', `/api/batches/${uuid}`, { token })).body.source, { format: 'csv', bytes: csv.length })
  const files = readdirSync(blobDir(me))
  t.equal(files.length, 1, 'one blob under the account')
  t.notOk(readFileSync(join(blobDir(me), files[0])).includes(Buffer.from('ok.jane')), 'sealed at rest: no address in the file on disk')

  const original = await download(uuid, '?original=true')
  t.equal(original.status, 200)
  t.same(original.bytes, csv, 'the file as uploaded, byte for byte')
  const merged = await download(uuid)
  t.equal(merged.status, 200)
  t.match(merged.type, /^text\/csv/)
  t.match(merged.disposition, /filename="crm-verified\.csv"/)
  t.ok(merged.bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])), 'its byte-order mark')
  const rows = parse(merged.bytes, { delimiter: ';', bom: true, relax_column_count: true }) as string[][]
  t.same(rows[0].slice(0, 5), ['Name', 'E-mail', 'Company', 'verdict', 'reason'])
  t.equal(rows.length, 5, 'every row')
  const results = (await api('GET', `/api/batches/${uuid}/results`, { token })).body.items as Array<{ email: string; verdict: string; reason: string }>
  const verdictOf = (email: string): string => results.find(r => r.email === email)!.verdict
  t.same(
    rows.slice(1).map(r => [r[0], r[1], r[2], r[3], r.at(-1)]),
    [
      ['Jane', 'ok.jane@kept-files.com', 'Acme; Inc.', verdictOf('ok.jane@kept-files.com'), 'verified'],
      ['John', 'john@kept-files.com', 'Beta', verdictOf('john@kept-files.com'), 'verified'],
      ['', '', '', '', 'empty'],
      ['Jane again', 'ok.jane@kept-files.com', 'Acme', verdictOf('ok.jane@kept-files.com'), 'duplicate']
    ],
    "each row with its own columns and the batch's result"
  )
  t.equal(verdictOf('ok.jane@kept-files.com'), 'valid')

  const other = await signUp(api, dataDir, 'stranger@example.com')
  t.equal((await download(uuid, '', other)).status, 404, "nobody else's to read")
})

t.test('an XLSX kept and downloaded as XLSX with its results', async t => {
  const book = new ExcelJS.Workbook()
  const sheet = book.addWorksheet('Leads')
  sheet.addRow(['email', 'score_in_crm'])
  sheet.addRow(['ok.ann@kept-files.com', 12])
  sheet.addRow(['bob@kept-files.com', 7])
  const bytes = Buffer.from(await book.xlsx.writeBuffer())
  const uuid = await batchOf(['ok.ann@kept-files.com', 'bob@kept-files.com'], 'leads.xlsx')
  t.equal((await upload(uuid, bytes, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', '?name=leads.xlsx')).status, 201)
  const merged = await download(uuid)
  t.match(merged.type, /spreadsheetml/)
  const back = new ExcelJS.Workbook()
  await back.xlsx.load(merged.bytes as unknown as ArrayBuffer)
  const ws = back.worksheets[0]
  t.same((ws.getRow(1).values as unknown[]).slice(1, 4), ['email', 'score_in_crm', 'verdict'])
  t.same((ws.getRow(2).values as unknown[]).slice(1, 4), ['ok.ann@kept-files.com', 12, 'valid'], 'a number stays a number')
  t.same((ws.getRow(3).values as unknown[]).slice(1, 4), ['bob@kept-files.com', 7, 'invalid'])
})

t.test('a segment of the kept file: only the rows of those verdicts, header kept, in its own format', async t => {
  const csv = Buffer.from('email,name\nok.sam@kept-files.com,Sam\nzed@kept-files.com,Zed\nok.amy@kept-files.com,Amy\nok.sam@kept-files.com,Sam again\n')
  const uuid = await batchOf(['ok.sam@kept-files.com', 'zed@kept-files.com', 'ok.amy@kept-files.com'], 'segments.csv')
  t.equal((await upload(uuid, csv, 'text/csv', '?name=segments.csv')).status, 201)
  const whole = parse((await download(uuid)).bytes, { columns: true }) as Array<Record<string, string>>
  t.ok(whole.some(r => r.verdict === 'invalid') && whole.some(r => r.verdict === 'valid'), 'both verdicts in the whole file (positive control)')
  for (const segment of ['valid', 'invalid']) {
    const part = await download(uuid, `?verdict=${segment}`)
    t.equal(part.status, 200)
    t.match(part.disposition, new RegExp(`filename="segments-${segment}\\.csv"`))
    t.same(
      parse(part.bytes, { columns: true }),
      whole.filter(r => r.verdict === segment),
      `verdict=${segment}: exactly those rows of the whole file, in order`
    )
  }
  t.equal((await download(uuid, '?verdict=splendid')).status, 400, 'an unknown verdict: 400')
})

t.test('a preview: columns, the address column, the first rows and the addresses once, before anything is spent', async t => {
  const preview = async (body: Buffer, type: string, query = ''): Promise<{ status: number; body: any }> => {
    const r = await fetch(`${service.url}/api/lists/preview${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': type },
      body: new Uint8Array(body)
    })
    record('POST', '/api/lists/preview', r.status)
    return { status: r.status, body: await r.json().catch(() => null) }
  }
  const balance = (await api('GET', '/api/wallet', { token })).body.balance
  const batches = (await api('GET', '/api/batches?limit=1', { token })).body.total
  const lines = [
    'Name;Company;E-mail',
    'Jane;Acme;jane@kept-files.com',
    'John;Beta;JOHN@Kept-Files.com',
    ';;',
    'Joan;Gamma;joan@kept-files.com',
    'Jon;Beta;john@kept-files.com'
  ]
  const csv = Buffer.from(`\uFEFF${lines.join('\r\n')}\r\n`)
  const r = await preview(csv, 'text/csv', '?name=crm.csv')
  t.equal(r.status, 200, JSON.stringify(r.body))
  // The oracle: the file's own lines, split here.
  const cells = lines.map(l => l.split(';'))
  t.same(r.body.columns, cells[0], 'the header names the columns')
  t.equal(r.body.column, 2, 'the address column found by its values')
  t.equal(r.body.rows, lines.length - 1, 'rows of data, the header not counted')
  t.same(r.body.sample, cells.slice(1, 6), 'the first rows, as text')
  t.same(r.body.addresses, ['jane@kept-files.com', 'JOHN@Kept-Files.com', 'joan@kept-files.com'], 'each address once, its first spelling, in order')
  t.same([r.body.unique, r.body.duplicates, r.body.empty], [3, 1, 1])
  t.equal((await preview(csv, 'text/csv', '?column=Company')).body.column, 1, 'a column named by the caller')

  const book = new ExcelJS.Workbook()
  const sheet = book.addWorksheet('Leads')
  sheet.addRow(['score', 'email'])
  sheet.addRow([12, 'ann@kept-files.com'])
  sheet.addRow([7, 'bob@kept-files.com'])
  const xlsx = await preview(
    Buffer.from(await book.xlsx.writeBuffer()),
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    '?name=leads.xlsx'
  )
  t.equal(xlsx.status, 200, JSON.stringify(xlsx.body))
  t.match(xlsx.body, { format: 'xlsx', columns: ['score', 'email'], column: 1, addresses: ['ann@kept-files.com', 'bob@kept-files.com'] })
  t.same(
    xlsx.body.sample,
    [
      ['12', 'ann@kept-files.com'],
      ['7', 'bob@kept-files.com']
    ],
    'an XLSX read by the service: what the page cannot read itself'
  )

  t.same((await preview(Buffer.from('{}'), 'application/json')).body?.code, 'preview_list.unsupported_media_type')
  const big = await preview(Buffer.alloc(5 * 1024 * 1024, 'a'), 'text/csv')
  t.same([big.status, big.body?.code], [413, 'preview_list.too_large'])
  const xls = await preview(
    Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(100)]),
    'application/octet-stream',
    '?name=old.xls'
  )
  t.same([xls.status, xls.body?.code], [415, 'preview_list.unsupported_file'])
  t.equal((await api('GET', '/api/wallet', { token })).body.balance, balance, 'nothing spent')
  t.equal((await api('GET', '/api/batches?limit=1', { token })).body.total, batches, 'no batch made')
})

t.test('what is not a list file, or too large, is refused and nothing is kept', async t => {
  const uuid = await batchOf(['ok.x@kept-files.com'], 'x.csv')
  const before = readdirSync(blobDir(me)).length
  const xls = await upload(
    uuid,
    Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(100)]),
    'application/octet-stream',
    '?name=old.xls'
  )
  t.equal(xls.status, 415)
  t.equal(xls.body.code, 'batch_source.unsupported_file')
  const big = await upload(uuid, Buffer.alloc(5 * 1024 * 1024, 'a'), 'text/csv')
  t.equal(big.status, 413)
  t.equal(big.body.code, 'batch_source.too_large')
  t.equal((await upload(uuid, Buffer.from('x'), 'application/json')).status, 415, 'JSON is not a list file')
  t.equal(readdirSync(blobDir(me)).length, before, 'no blob left behind')
  t.equal((await download(uuid)).status, 404, 'nothing kept')
})

t.test('removed on request, at the end of its retention, and with the account', async t => {
  const uuid = await batchOf(['ok.y@kept-files.com'], 'y.csv')
  t.equal((await upload(uuid, Buffer.from('email\nok.y@kept-files.com\n'), 'text/csv')).status, 201)
  const count = (): number => readdirSync(blobDir(me)).filter(f => !f.startsWith('.')).length
  const n = count()
  t.equal((await api('DELETE', `/api/batches/${uuid}/source`, { token })).status, 204)
  await waitUntil(() => count() === n - 1)
  t.equal((await download(uuid)).status, 404, 'removed on request')

  const kept = await batchOf(['ok.z@kept-files.com'], 'z.csv')
  const before = new Set(readdirSync(blobDir(me)))
  t.equal((await upload(kept, Buffer.from('email\nok.z@kept-files.com\n'), 'text/csv')).status, 201)
  const file = readdirSync(blobDir(me)).find(f => !before.has(f))!
  t.ok(file, 'the new file on disk')
  clockOffset = 31 * 86_400_000
  await waitUntil(() => !existsSync(join(blobDir(me), file)), 10_000)
  await waitUntil(async () => (await download(kept)).status === 404)
  t.pass('the sweep removed the file when its 30 days were over, as the API and DATA_DIR say')
  clockOffset = 0

  const last = await batchOf(['ok.w@kept-files.com'], 'w.csv')
  t.equal((await upload(last, Buffer.from('email\nok.w@kept-files.com\n'), 'text/csv')).status, 201)
  t.ok(count() > 0)
  t.equal((await api('DELETE', `/api/users/${me}`, { token, body: { password: 'correct horse battery staple' } })).status, 204)
  await waitUntil(() => !existsSync(blobDir(me)), 10_000)
  t.pass('the account deleted: its kept files are gone from DATA_DIR')
})
