// `svc verify-file` round trips: real-shaped files — a
// CSV with a byte-order mark, semicolons and quoted commas, a headerless TSV, an XLSX made
// by a spreadsheet library, a text file with blank lines and duplicates — through the CLI
// against the service and the simulated mail world: every row back, in order, with its
// columns, its result checked against the world's ground truth; `--only` and `--split`
// hold exactly the rows of their verdicts; a balance that covers half the list: refused,
// then `--partial`, then `--resume` after a grant, nothing charged twice; Ctrl-C keeps what
// is done; the errors a person meets are sentences, not stack traces.
// The oracles: the mail world's ground truth (a local part starting `ok` is accepted), the
// files the test wrote, the API's wallet and batches read back. This file owns 127.0.107.0/24.
import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import ExcelJS from 'exceljs'
import { startMailWorld } from '../../support/mail-world.ts'
import { signUp, build } from '../../support/service.ts'
import { waitUntil } from '../../support/eventstore-contract.ts'
import { grantTokens } from '../../../src/commands/wallet/grant-tokens.ts'

const DOMAINS = ['list-alpha.com', 'list-beta.com']
const rcpt = (a: string): { code: number; message: string } =>
  /^ok/i.test(a) ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' }
const world = await startMailWorld({
  dns_ip: '127.0.107.1',
  domains: [
    ...DOMAINS.map((name, k) => ({ name, mx: [{ preference: 10, exchange: `mx.${name}` }], k })),
    { name: 'list-slow.com', mx: [{ preference: 10, exchange: 'mx.list-slow.com' }] }
  ],
  hosts: [
    ...DOMAINS.map((name, k) => ({ name: `mx.${name}`, ip: `127.0.107.${10 + k}`, rcpt })),
    { name: 'mx.list-slow.com', ip: '127.0.107.20', rcpt, rcpt_delay_ms: 250, max_sessions: 2 }
  ]
})
t.teardown(() => world.close())
/** The world's ground truth for an address of a list. */
const truth = (address: string): string => (!/^[^\s@]+@[^\s@]+\.[a-z]+$/i.test(address.trim()) ? 'invalid' : /^ok/i.test(address.trim()) ? 'valid' : 'invalid')

const { dataDir, service, api } = await build(t, { VERIFIER_DNS_SERVERS: world.dns_server })
const cliPath = new URL('../../../src/cli.ts', import.meta.url).pathname

async function account(email: string, tokens: number): Promise<{ token: string; key: string }> {
  const token = await signUp(api, dataDir, email)
  const granted = (await api('GET', '/api/wallet', { token })).body.balance as number
  // The Free plan's grant comes with the confirmation: what the test wants is on top, or taken as it is.
  if (tokens > granted) await grantTokens(service.core.ctx, { email, tokens: tokens - granted, reason: 'verify-file tests', operator: 'test' })
  await waitUntil(async () => (await api('GET', '/api/wallet', { token })).body.balance >= tokens)
  const key = (
    await api('POST', '/api/keys', { token, body: { name: 'lists', environment: 'live', scopes: ['email:verify:bulk', 'results:read', 'billing:read'] } })
  ).body.raw_key as string
  return { token, key }
}

interface Run {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
}
/** `svc verify-file` in a process of its own, as a customer runs it. */
function cli(args: string[], env: Record<string, string> = {}, onStderr?: (text: string, kill: (s: NodeJS.Signals) => void) => void): Promise<Run> {
  const child = spawn(process.execPath, [cliPath, 'verify-file', ...args], {
    env: { ...process.env, SVC_API_URL: service.url, SVC_PROGRESS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString()
  })
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString()
    onStderr?.(stderr, s => child.kill(s))
  })
  return new Promise(resolve =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal, stdout, stderr })
    })
  )
}
const csvOf = (path: string, delimiter = ','): string[][] => parse(readFileSync(path), { delimiter, bom: true, relax_column_count: true }) as string[][]
const RESULT = [
  'verdict',
  'reason',
  'score',
  'free',
  'role',
  'disposable',
  'accept_all',
  'mailbox_full',
  'possible_typo',
  'did_you_mean',
  'mx_host',
  'smtp_provider',
  'checked_at',
  'row_status'
]

const owner = await account('lists@example.com', 5_000)
const dir = join(dataDir, 'lists')
mkdirSync(dir, { recursive: true })

t.test('a CSV with a BOM, semicolons and quoted commas: every row back, in order, with its columns and its result', async t => {
  const input = join(dir, 'crm.csv')
  const rows = [
    ['Name', 'Company', 'E-mail', 'Notes'],
    ['Jane Doe', 'Acme; Inc.', 'ok.jane@list-alpha.com', 'likes "quotes", commas'],
    ['John', 'Beta', 'john@list-alpha.com', ''],
    ['', '', '', ''],
    ['Jane again', 'Acme; Inc.', 'ok.jane@list-alpha.com', 'a duplicate row'],
    ['Upper', 'Beta', 'OK.Jane@LIST-ALPHA.COM', 'the same address in capitals'],
    ['Bad', 'Gamma', 'not-an-address', ''],
    ['Mary', 'Delta', 'ok.mary@list-beta.com', 'multi\nline note']
  ]
  const quote = (c: string): string => (/[;"\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)
  // The last line opens a quote it never closes: it cannot be parsed, and stays, marked.
  writeFileSync(input, `\uFEFF${rows.map(r => r.map(quote).join(';')).join('\r\n')}\r\nZed;"unclosed;ok.zed@list-alpha.com\r\n`)
  const out = join(dir, 'crm-results.csv')
  const run = await cli([input, '--out', out], { SVC_API_KEY: owner.key })
  t.equal(run.code, 0, run.stderr.slice(-500))
  const summary = JSON.parse(run.stdout)
  t.match(summary, { rows: 8, unique: 4, complete: true, duplicate_rows: 2, empty_rows: 1, unparsable_rows: 1, state: null })
  const text = readFileSync(out, 'utf8')
  t.ok(text.startsWith('\uFEFF'), 'the byte-order mark kept')
  t.ok(text.includes('\r\n'), 'the line ending kept')
  const back = csvOf(out, ';')
  t.same(back[0], [...rows[0], ...RESULT], "the header: the customer's columns, then the result columns")
  t.equal(back.length, rows.length + 1, 'every row, the empty and the unparsable one too')
  t.same([back[rows.length][0], back[rows.length].at(-1)], ['Zed;"unclosed;ok.zed@list-alpha.com', 'unparsable'], 'the unparsable row: its text, marked')
  for (let i = 1; i < rows.length; i++) {
    t.same(back[i].slice(0, 4), rows[i], `row ${i}: its own columns as they were`)
    const r = Object.fromEntries(RESULT.map((c, k) => [c, back[i][4 + k]]))
    if (rows[i][2] === '') {
      t.match(r, { verdict: '', row_status: 'empty' }, `row ${i} stays, marked empty`)
      continue
    }
    t.equal(r.verdict, truth(rows[i][2]), `row ${i}: ${rows[i][2]} is ${truth(rows[i][2])} in the world`)
  }
  t.equal(back[4][4 + RESULT.indexOf('row_status')], 'duplicate', 'the repeated row says it is a duplicate')
  t.equal(back[5][4 + RESULT.indexOf('row_status')], 'duplicate', 'so does the same address in capitals')
  t.same(back[4].slice(4, 4 + 10), back[1].slice(4, 4 + 10), "with its first occurrence's result")
  t.match(back[1], [
    /.*/,
    /.*/,
    /.*/,
    /.*/,
    'valid',
    'accepted_email',
    /^\d+$/,
    'false',
    'false',
    'false',
    'false',
    'false',
    'false',
    '',
    'mx.list-alpha.com',
    /.*/,
    /^\d{4}-\d\d-\d\dT/,
    'verified'
  ])
  t.match(back[6], { 4: 'invalid', 5: 'invalid_syntax' })
  t.notOk(existsSync(`${out}.state.sqlite`), 'the state file is removed on success')
  t.match(run.stderr, /verify \[.*\] 100% \| 4\/4 addresses/, 'the bar reaches 100%')
  t.match(run.stderr, /write \[.*\] 100% \| 9\/9 rows/, 'the rows written, to the last')
})

t.test('a headerless TSV: the address column found by its values; a text file with blank lines and duplicates', async t => {
  const tsv = join(dir, 'plain.tsv')
  writeFileSync(tsv, `${['1\tok.ann@list-beta.com\tx', '2\tbob@list-beta.com\ty', '3\tok.ann@list-beta.com\tz'].join('\n')}\n`)
  const out = join(dir, 'plain-results.tsv')
  const run = await cli([tsv, '--out', out], { SVC_API_KEY: owner.key })
  t.equal(run.code, 0, run.stderr.slice(-400))
  const back = csvOf(out, '\t')
  t.same(back[0], ['column_1', 'column_2', 'column_3', ...RESULT])
  t.same(
    back.slice(1).map(r => [r[0], r[1], r[2], r[3], r.at(-1)]),
    [
      ['1', 'ok.ann@list-beta.com', 'x', 'valid', 'verified'],
      ['2', 'bob@list-beta.com', 'y', 'invalid', 'verified'],
      ['3', 'ok.ann@list-beta.com', 'z', 'valid', 'duplicate']
    ]
  )

  const txt = join(dir, 'addresses.txt')
  writeFileSync(txt, 'ok.tom@list-alpha.com\n\nsam@list-alpha.com\nok.tom@list-alpha.com\n\n')
  const out2 = join(dir, 'addresses.csv')
  const run2 = await cli([txt, '--out', out2], { SVC_API_KEY: owner.key })
  t.equal(run2.code, 0, run2.stderr.slice(-400))
  const back2 = csvOf(out2)
  t.same(
    back2.map(r => [r[0], r[1], r.at(-1)]),
    [
      ['column_1', 'verdict', 'row_status'],
      ['ok.tom@list-alpha.com', 'valid', 'verified'],
      ['', '', 'empty'],
      ['sam@list-alpha.com', 'invalid', 'verified'],
      ['ok.tom@list-alpha.com', 'valid', 'duplicate'],
      ['', '', 'empty']
    ],
    'five lines, five rows'
  )
})

t.test('an XLSX made by a spreadsheet library: typed cells kept, XLSX out', async t => {
  const input = join(dir, 'book.xlsx')
  const book = new ExcelJS.Workbook()
  const sheet = book.addWorksheet('Contacts')
  sheet.addRow(['email', 'age', 'since', 'vip'])
  sheet.addRow(['ok.zoe@list-alpha.com', 41, new Date(Date.UTC(2020, 4, 17)), true])
  sheet.addRow([{ text: 'kim@list-beta.com', hyperlink: 'mailto:kim@list-beta.com' }, 35, new Date(Date.UTC(2021, 0, 2)), false])
  sheet.addRow([])
  sheet.addRow(['ok.lee@list-beta.com', 29, null, null])
  await book.xlsx.writeFile(input)
  const out = join(dir, 'book-results.xlsx')
  const run = await cli([input, '--out', out], { SVC_API_KEY: owner.key })
  t.equal(run.code, 0, run.stderr.slice(-400))
  const read = new ExcelJS.Workbook()
  await read.xlsx.readFile(out)
  const ws = read.worksheets[0]
  const values = (n: number): unknown[] => (ws.getRow(n).values as unknown[]).slice(1)
  t.same(values(1).slice(0, 5), ['email', 'age', 'since', 'vip', 'verdict'])
  t.equal(values(2)[0], 'ok.zoe@list-alpha.com')
  t.equal(values(2)[1], 41, 'a number stays a number')
  t.ok(values(2)[2] instanceof Date && (values(2)[2] as Date).toISOString().startsWith('2020-05-17'), 'a date stays a date')
  t.equal(values(2)[3], true, 'a boolean stays a boolean')
  t.equal(values(2)[4], 'valid')
  t.equal(values(3)[0], 'kim@list-beta.com', 'a hyperlink cell: its text')
  t.equal(values(3)[4], 'invalid')
  t.equal(ws.getRow(4).values.length === 0 || values(4).at(-1) === 'empty', true, 'the empty row stays')
  t.equal(values(5)[4], 'valid')
  t.equal(ws.rowCount, 5, 'every row')
})

t.test('--only and --split hold exactly the rows of their verdicts', async t => {
  const input = join(dir, 'mixed.csv')
  const addresses = Array.from({ length: 30 }, (_, i) => `${i % 3 === 0 ? 'ok' : 'no'}${i}@${DOMAINS[i % 2]}`)
  writeFileSync(input, `email,n\n${addresses.map((a, i) => `${a},${i}`).join('\n')}\n,blank\nnot an address,bad\n`)
  const out = join(dir, 'valid-only.csv')
  const split = join(dir, 'split')
  const run = await cli([input, '--out', out, '--only', 'valid', '--split', split], { SVC_API_KEY: owner.key })
  t.equal(run.code, 0, run.stderr.slice(-400))
  const only = csvOf(out).slice(1)
  t.same(
    only.map(r => r[0]),
    addresses.filter(a => truth(a) === 'valid'),
    'only the valid rows, in order'
  )
  t.same(readdirSync(split).sort(), ['invalid.csv', 'risky.csv', 'unknown.csv', 'unverified.csv', 'valid.csv'])
  const of = (f: string): string[] =>
    csvOf(join(split, f))
      .slice(1)
      .map(r => r[0])
  t.same(
    of('valid.csv'),
    addresses.filter(a => truth(a) === 'valid')
  )
  t.same(of('invalid.csv'), [...addresses.filter(a => truth(a) === 'invalid'), 'not an address'])
  t.same(of('risky.csv'), [])
  t.same(of('unverified.csv'), [''], 'the blank row')
})

t.test('a balance that covers half: refused, then --partial, then --resume after a grant; nothing charged twice', async t => {
  const payer = await account('half@example.com', 1_000)
  const per = (await api('POST', '/api/batches/estimate', { token: payer.key, body: { addresses: 1 } })).body.cost_per_address as number
  const balance = (await api('GET', '/api/wallet', { token: payer.token })).body.balance as number
  const n = Math.floor(balance / per) * 2
  const addresses = Array.from({ length: n }, (_, i) => `${i % 2 === 0 ? 'ok' : 'no'}half${i}@${DOMAINS[i % 2]}`)
  const input = join(dir, 'half.csv')
  writeFileSync(input, `id,email\n${addresses.map((a, i) => `${i},${a}`).join('\n')}\n`)
  const out = join(dir, 'half-results.csv')

  const estimate = await cli([input, '--estimate'], { SVC_API_KEY: payer.key })
  t.equal(estimate.code, 0)
  t.match(JSON.parse(estimate.stdout), { rows: n, unique: n, valid: n, cost_per_address: per, cost: n * per, balance, covered: n / 2 })

  const refused = await cli([input, '--out', out], { SVC_API_KEY: payer.key })
  t.equal(refused.code, 1)
  t.match(
    refused.stderr,
    new RegExp(`error: the list needs ${n * per} tokens .* the balance is ${balance}: top up ${n * per - balance} tokens, or run with --partial`)
  )
  t.notOk(existsSync(out), 'no file written')
  t.equal((await api('GET', '/api/batches', { token: payer.key })).body.total, 0, 'nothing sent')

  const partial = await cli([input, '--out', out, '--partial'], { SVC_API_KEY: payer.key })
  t.equal(partial.code, 0, partial.stderr.slice(-400))
  const p = JSON.parse(partial.stdout)
  t.match(p, { complete: false, verified_rows: n / 2, pending_rows: n / 2, tokens_needed: (n / 2) * per })
  t.match(partial.stderr, new RegExp(`${n / 2} rows pending: .*the rest needs ${(n / 2) * per} tokens; run again with --resume`))
  const half = csvOf(out).slice(1)
  t.equal(half.length, n, 'every row in the file')
  t.same(
    half.map(r => r.at(-1)),
    addresses.map((_, i) => (i < n / 2 ? 'verified' : 'pending')),
    'the first half verified, the rest marked pending'
  )

  await grantTokens(service.core.ctx, { email: 'half@example.com', tokens: n * per, reason: 'top-up', operator: 'test' })
  await waitUntil(async () => (await api('GET', '/api/wallet', { token: payer.token })).body.balance >= n * per)
  const resumed = await cli([input, '--out', out, '--resume'], { SVC_API_KEY: payer.key })
  t.equal(resumed.code, 0, resumed.stderr.slice(-400))
  t.match(JSON.parse(resumed.stdout), { complete: true, verified_rows: n, pending_rows: 0 })
  const all = csvOf(out).slice(1)
  t.same(
    all.map(r => r[2]),
    addresses.map(truth),
    "every row has its result, the world's"
  )
  const batches = (await api('GET', '/api/batches', { token: payer.key })).body.items as Array<{
    progress: { total: number }
    tokens: { captured: number; reserved: number; released: number }
  }>
  t.equal(batches.length, 2, "two batches: the partial run's and the rest")
  t.equal(
    batches.reduce((s, b) => s + b.progress.total, 0),
    n,
    'each address sent once'
  )
  const spent = batches.reduce((s, b) => s + b.tokens.captured, 0)
  const wallet = (await api('GET', '/api/wallet', { token: payer.token })).body
  t.equal(balance + n * per - wallet.balance, spent, 'the wallet lost what the batches captured, no more')
  t.ok(spent <= n * per, 'at most one charge per address')
  t.notOk(existsSync(`${out}.state.sqlite`), 'the state removed once complete')
})

t.test('Ctrl-C keeps what is done; --resume finishes', async t => {
  const input = join(dir, 'slow.csv')
  const addresses = Array.from({ length: 24 }, (_, i) => `${i % 2 === 0 ? 'ok' : 'no'}slow${i}@list-slow.com`)
  writeFileSync(input, `email\n${addresses.join('\n')}\n`)
  const out = join(dir, 'slow-results.csv')
  let sent = false
  const first = await cli([input, '--out', out, '--chunk-size', '8'], { SVC_API_KEY: owner.key }, (text, kill) => {
    // Interrupted once the batch runs and results arrive (the bar of the verify phase has moved).
    if (!sent && /verify \[.*\] \d+% \| ([1-9]|1\d|2[0-3])\/24 /.test(text)) {
      sent = true
      kill('SIGINT')
    }
  })
  t.ok(sent, 'interrupted while verifying')
  t.equal(first.code, 1)
  t.match(first.stderr, /stopping: writing the results already done/)
  const partial = csvOf(out).slice(1)
  t.equal(partial.length, 24, 'every row written')
  const done = partial.filter(r => r.at(-1) === 'verified')
  t.ok(done.length > 0, `${done.length} rows kept their result`)
  for (const r of done) t.equal(r[1], truth(r[0]))
  t.ok(existsSync(`${out}.state.sqlite`), 'the state kept')
  const resumed = await cli([input, '--out', out, '--resume'], { SVC_API_KEY: owner.key })
  t.equal(resumed.code, 0, resumed.stderr.slice(-400))
  t.same(
    csvOf(out)
      .slice(1)
      .map(r => r[1]),
    addresses.map(truth)
  )
})

t.test('what a person gets wrong is said in a sentence, and nothing is lost', async t => {
  const input = join(dir, 'small.csv')
  writeFileSync(input, 'email\nok.a@list-alpha.com\n')
  const missing = await cli([join(dir, 'nope.csv'), '--out', join(dir, 'x.csv')], { SVC_API_KEY: owner.key })
  t.equal(missing.code, 1)
  t.match(missing.stderr, /^error: no such file: .*nope\.csv\n$/, 'a missing file: one line')
  const badKey = await cli([input, '--out', join(dir, 'bad-key.csv')], { SVC_API_KEY: 'svc_not_a_real_key' })
  t.equal(badKey.code, 1)
  t.match(badKey.stderr, /error: .*the API key was refused/)
  t.notOk(existsSync(join(dir, 'bad-key.csv')), 'no header-only file left')
  t.notOk(existsSync(join(dir, 'bad-key.csv.state.sqlite')), 'no state left: nothing was sent')
  const goodKey = await cli([input, '--out', join(dir, 'bad-key.csv')], { SVC_API_KEY: owner.key })
  t.equal(goodKey.code, 0, `the same run with a good key needs no --resume: ${goodKey.stderr}`)
  const down = await cli([input, '--out', join(dir, 'down.csv')], { SVC_API_KEY: owner.key, SVC_API_URL: 'http://127.0.0.1:9' })
  t.equal(down.code, 1)
  t.match(down.stderr, /error: cannot reach the service at http:\/\/127\.0\.0\.1:9/)
  t.notMatch(down.stderr, /\n\s+at /, 'no stack trace')
  const existing = join(dir, 'existing.csv')
  writeFileSync(existing, 'keep me\n')
  const refused = await cli([input, '--out', existing], { SVC_API_KEY: owner.key })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /existing\.csv exists: --force to replace it/)
  t.equal(readFileSync(existing, 'utf8'), 'keep me\n', 'untouched')
  const forced = await cli([input, '--out', existing, '--force'], { SVC_API_KEY: owner.key })
  t.equal(forced.code, 0, forced.stderr)
  t.match(readFileSync(existing, 'utf8'), /^email,verdict/)
  const usage = await cli([input], { SVC_API_KEY: owner.key })
  t.equal(usage.code, 2, 'no --out nor --split: a usage error')
  const column = await cli([input, '--out', join(dir, 'col.csv'), '--column', 'mail'], { SVC_API_KEY: owner.key })
  t.equal(column.code, 1)
  t.match(column.stderr, /^error: no column "mail" \(the columns: email\)/)
  t.notMatch(column.stderr, /\n\s+at /, 'no stack trace')
  t.notOk(existsSync(join(dir, 'col.csv.state.sqlite')), 'no state left')
})
