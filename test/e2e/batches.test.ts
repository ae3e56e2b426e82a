import t from 'tap'
import { parse } from 'csv-parse/sync'
import { createServer, type IncomingMessage } from 'node:http'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp, startTestService, testConfig, type Api } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { plansFile } from '../support/plans.ts'
import { grantTokens } from '../../src/commands/wallet/grant-tokens.ts'
import { operatorSetPlan } from '../../src/flows/plan-change/operator-set-plan.ts'

// Batches. This file owns 127.0.80.0/24.
// Ground truth is the mail world's: a local part starting with `ok` is accepted (250),
// anything else is refused (550 5.1.1); `nowhere-bulk.com` has no DNS records at all;
// `grey-bulk.com` greylists every address for 300 ms.
const accepts = (address: string): boolean => /^ok/.test(address)
const rcpt = (address: string): { code: number; message: string } =>
  accepts(address) ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' }
const DOMAINS = ['alpha-bulk.com', 'beta-bulk.com', 'gamma-bulk.com', 'delta-bulk.com']
const world = await startMailWorld({
  dns_ip: '127.0.80.1',
  domains: [
    ...DOMAINS.map((name, k) => ({ name, mx: [{ preference: 10, exchange: `mx.${name}` }], k })),
    { name: 'grey-bulk.com', mx: [{ preference: 10, exchange: 'mx.grey-bulk.com' }] },
    // bücher-bulk.com in DNS: its A-labels (RFC 5891).
    { name: 'xn--bcher-bulk-9db.com', mx: [{ preference: 10, exchange: 'mx.xn--bcher-bulk-9db.com' }] },
    { name: 'slow-bulk.com', mx: [{ preference: 10, exchange: 'mx.slow-bulk.com' }] }
  ],
  hosts: [
    ...DOMAINS.map((name, k) => ({ name: `mx.${name}`, ip: `127.0.80.${10 + k}`, rcpt })),
    { name: 'mx.grey-bulk.com', ip: '127.0.80.20', rcpt, greylist_ms: 300 },
    { name: 'mx.xn--bcher-bulk-9db.com', ip: '127.0.80.21', rcpt },
    // Half a second a recipient: its part's other items are answered long before.
    { name: 'mx.slow-bulk.com', ip: '127.0.80.22', rcpt, rcpt_delay_ms: 500 }
  ]
})
t.teardown(() => world.close())

const dataDir = t.testdir()
// Small caps so that every cap is reachable: 60 unique valid addresses a batch, 50 a request
// on Free; Pro lifts them for the 2,000-address run.
const plans = plansFile(dataDir, {
  free: {
    tokens_per_month: 200,
    max_webhooks: 5,
    max_batch_size: 60,
    max_chunk_size: 50,
    rate_limit_per_minute: 1_000_000,
    allowed_checks: ['syntax', 'typo', 'disposable', 'role', 'free', 'dns', 'smtp']
  },
  pro: { max_batch_size: 5_000, max_chunk_size: 600, rate_limit_per_minute: 1_000_000 }
})
const service = await startTestService(
  testConfig(dataDir, {
    VERIFIER_DNS_SERVERS: world.dns_server,
    VERIFIER_GREYLIST_RETRY_S: '0.3',
    VERIFIER_GREYLIST_DEADLINE_S: '30',
    PLANS_FILE: plans,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_BASE_MS: '200'
  })
)
t.teardown(() => service.close())
const api = client(service.url)

const config = (await api('GET', '/api/config')).body
const costs: Record<string, number> = config.check_costs
/** Tokens an item costs under the published prices: the requested checks that ran (the interface's rule), nothing for `unknown`. */
const SMTP_CHECKS = ['syntax', 'dns', 'smtp']
const charged = (address: string): number => {
  const domain = address.split('@')[1]
  if (domain === 'nowhere-bulk.com') return costs.syntax + costs.dns // no MX: the SMTP check never ran
  return SMTP_CHECKS.reduce((sum, c) => sum + costs[c], 0)
}
const expectedVerdict = (address: string): string => (address.endsWith('@nowhere-bulk.com') ? 'invalid' : accepts(address) ? 'valid' : 'invalid')

async function account(email: string, tokens = 0): Promise<{ token: string; key: string }> {
  const token = await signUp(api, dataDir, email)
  if (tokens > 0) await grantTokens(service.core.ctx, { email, tokens, reason: 'batch tests', operator: 'test' })
  const key = (await api('POST', '/api/keys', { token, body: { name: 'bulk', environment: 'live' } })).body.raw_key as string
  return { token, key }
}

async function completed(api: Api, key: string, uuid: string, timeoutMs = 60_000): Promise<any> {
  let b: any
  await waitUntil(async () => {
    b = (await api('GET', `/api/batches/${uuid}`, { token: key })).body
    return b.status === 'completed' && b.tokens.reserved === b.tokens.captured + b.tokens.released
  }, timeoutMs)
  return b
}

async function allResults(key: string, uuid: string): Promise<any[]> {
  const out: any[] = []
  for (let offset = 0; ; offset += 96) {
    const page = await api('GET', `/api/batches/${uuid}/results?limit=96&offset=${offset}`, { token: key })
    if (page.status !== 200) throw new Error(`results: ${page.status}`)
    out.push(...page.body.items)
    if (page.body.items.length < 96) return out
  }
}

const wallet = async (token: string): Promise<{ balance: number; reserved: number }> => (await api('GET', '/api/wallet', { token })).body

const rich = await account('rich@example.com', 100_000)

t.test('POST /api/batches: trimmed, normalized, de-duplicated; invalid at once and free; verified against the world; charged exactly', async t => {
  const before = await wallet(rich.token)
  const emails = [
    '  ok1@alpha-bulk.com ',
    'ok1@ALPHA-BULK.COM',
    'no1@beta-bulk.com',
    'ok2@gamma-bulk.com',
    'not an address',
    'not an address',
    'x@nowhere-bulk.com',
    'ok3@delta-bulk.com'
  ]
  const r = await api('POST', '/api/batches', { token: rich.key, body: { emails, checks: ['smtp'], final: true, name: 'first' } })
  t.equal(r.status, 202, JSON.stringify(r.body))
  t.equal(r.headers.get('location'), `/api/batches/${r.body.uuid}`)
  t.match(r.body, { name: 'first', checks: SMTP_CHECKS, chunk: { accepted: 6, duplicates: 2, invalid: 1 }, progress: { total: 6 } })
  const perItem = SMTP_CHECKS.reduce((sum, c) => sum + costs[c], 0)
  t.equal(r.body.cost_per_item, perItem, 'the published price of the checks')
  t.equal(r.body.chunk.reserved, 5 * perItem, 'five unique valid addresses reserved, the invalid one free')
  const b = await completed(api, rich.key, r.body.uuid)
  t.same(b.progress, { total: 6, processed: 6, pending: 0 })
  t.equal(b.intake, 'closed')
  const results = await allResults(rich.key, r.body.uuid)
  t.same(
    results.map(x => x.email),
    ['ok1@alpha-bulk.com', 'no1@beta-bulk.com', 'ok2@gamma-bulk.com', 'not an address', 'x@nowhere-bulk.com', 'ok3@delta-bulk.com']
  )
  t.same(
    results.map(x => x.index),
    [0, 1, 2, 3, 4, 5]
  )
  for (const x of results) {
    if (x.email === 'not an address') {
      t.match(x, { verdict: 'invalid', reason: 'invalid_syntax', status: 'done' })
      continue
    }
    t.equal(x.verdict, expectedVerdict(x.email), `${x.email}: ${x.verdict}/${x.reason}`)
  }
  const captured = results.filter(x => x.email !== 'not an address').reduce((sum, x) => sum + charged(x.email), 0)
  t.equal(b.tokens.captured, captured, 'captured: the checks that ran, per item')
  t.equal(b.tokens.released, 5 * perItem - captured)
  t.same(b.results.by_verdict, { valid: 3, invalid: 3, risky: 0, unknown: 0 })
  t.equal(b.results.by_reason.invalid_syntax, 1)
  await waitUntil(async () => (await wallet(rich.token)).reserved === before.reserved)
  t.equal((await wallet(rich.token)).balance, before.balance - captured, 'the wallet paid exactly what was captured')
})

t.test('an IDN address comes back as submitted, its A-label form beside it; the two spellings are one address', async t => {
  const emails = ['ok-idn@bücher-bulk.com', 'ok-idn@xn--bcher-bulk-9db.com', 'no-idn@Bücher-Bulk.com']
  const r = await api('POST', '/api/batches', { token: rich.key, body: { emails, checks: ['smtp'], final: true } })
  t.equal(r.status, 202, JSON.stringify(r.body))
  t.match(r.body.chunk, { accepted: 2, duplicates: 1 }, 'the A-label spelling is a duplicate of the U-label one')
  await completed(api, rich.key, r.body.uuid)
  const results = await allResults(rich.key, r.body.uuid)
  t.same(
    results.map(x => [x.email, x.normalized, x.verdict]),
    [
      ['ok-idn@bücher-bulk.com', 'ok-idn@xn--bcher-bulk-9db.com', 'valid'],
      ['no-idn@Bücher-Bulk.com', 'no-idn@xn--bcher-bulk-9db.com', 'invalid']
    ],
    'each as sent, the form that was asked beside it, and answered by the server behind the A-labels'
  )
  const csv = await fetch(`${service.url}/api/batches/${r.body.uuid}/results`, { headers: { authorization: `Bearer ${rich.key}`, accept: 'text/csv' } })
  const lines = (await csv.text()).trim().split('\r\n')
  t.match(lines[0], /^position,email,normalized,status,/, 'the CSV has the column too')
  t.match(lines[1], /^1,ok-idn@bücher-bulk\.com,ok-idn@xn--bcher-bulk-9db\.com,done,valid,/)
})

t.test('chunks: intake open, de-duplication across chunks, 409 once closed', async t => {
  const r = await api('POST', '/api/batches', {
    token: rich.key,
    body: { emails: ['ok10@alpha-bulk.com', 'no10@beta-bulk.com'], checks: ['smtp'], final: false }
  })
  t.equal(r.status, 202)
  t.equal(r.body.status, 'receiving')
  t.equal(r.body.intake, 'open')
  const uuid = r.body.uuid
  const c1 = await api('POST', `/api/batches/${uuid}/emails`, {
    token: rich.key,
    body: { emails: ['OK10@alpha-bulk.com', 'ok10@ALPHA-bulk.com', 'ok11@gamma-bulk.com'] }
  })
  t.equal(c1.status, 202)
  t.match(c1.body.chunk, { accepted: 2, duplicates: 1 }, 'the domain is case-folded; the local part is kept as sent (RFC 5321 §2.4)')
  const c2 = await api('POST', `/api/batches/${uuid}/emails`, {
    token: rich.key,
    body: { emails: ['no10@beta-bulk.com', 'ok11@gamma-bulk.com', 'ok12@delta-bulk.com'], final: true }
  })
  t.equal(c2.status, 202)
  t.match(c2.body.chunk, { accepted: 1, duplicates: 2 })
  t.equal(c2.body.intake, 'closed')
  t.equal(c2.body.progress.total, 5)
  const late = await api('POST', `/api/batches/${uuid}/emails`, { token: rich.key, body: { emails: ['ok13@alpha-bulk.com'] } })
  t.equal(late.status, 409)
  t.equal(late.body.code, 'add_chunk.intake_closed')
  const b = await completed(api, rich.key, uuid)
  t.equal(b.duplicates, 3)
  const again = await api('POST', `/api/batches/${uuid}/emails`, { token: rich.key, body: { emails: ['ok14@alpha-bulk.com'], final: true } })
  t.equal(again.status, 409, 'terminal')
  t.same(
    (await allResults(rich.key, uuid)).map(x => x.email),
    ['ok10@alpha-bulk.com', 'no10@beta-bulk.com', 'OK10@alpha-bulk.com', 'ok11@gamma-bulk.com', 'ok12@delta-bulk.com']
  )
})

t.test('an empty final chunk closes intake; an empty chunk otherwise is a 400', async t => {
  const r = await api('POST', '/api/batches', { token: rich.key, body: { emails: ['ok20@alpha-bulk.com'], checks: ['smtp'], final: false } })
  const empty = await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: rich.key, body: { emails: [] } })
  t.equal(empty.status, 400)
  t.equal(empty.body.code, 'add_chunk.empty')
  const close = await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: rich.key, body: { emails: [], final: true } })
  t.equal(close.status, 202)
  t.equal(close.body.intake, 'closed')
  await completed(api, rich.key, r.body.uuid)
})

t.test('plan caps: max_batch_size across chunks (403), per-request cap (400), checks the plan does not allow (403)', async t => {
  const r = await api('POST', '/api/batches', {
    token: rich.key,
    body: { emails: Array.from({ length: 40 }, (_, i) => `no${i}@alpha-bulk.com`), checks: ['dns'], final: false }
  })
  t.equal(r.status, 202)
  const over = await api('POST', `/api/batches/${r.body.uuid}/emails`, {
    token: rich.key,
    body: { emails: [...Array.from({ length: 21 }, (_, i) => `no${i}@beta-bulk.com`), 'bad address'] }
  })
  t.equal(over.status, 403, '40 + 21 unique valid addresses pass 60')
  t.equal(over.body.code, 'add_chunk.max_batch_size')
  const dupes = await api('POST', `/api/batches/${r.body.uuid}/emails`, {
    token: rich.key,
    body: {
      emails: [...Array.from({ length: 20 }, (_, i) => `no${i}@alpha-bulk.com`), ...Array.from({ length: 20 }, (_, i) => `no${i}@beta-bulk.com`), 'bad address']
    }
  })
  t.equal(dupes.status, 202, 'duplicates and invalid addresses do not count: 40 + 20 = 60')
  t.match(dupes.body.chunk, { accepted: 21, duplicates: 20, invalid: 1 })
  const full = await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: rich.key, body: { emails: ['no99@gamma-bulk.com'], final: true } })
  t.equal(full.status, 403)
  const big = await api('POST', `/api/batches/${r.body.uuid}/emails`, {
    token: rich.key,
    body: { emails: Array.from({ length: 51 }, (_, i) => `no${i}@alpha-bulk.com`) }
  })
  t.equal(big.status, 400, 'above max_chunk_size 50')
  t.equal(big.body.code, 'add_chunk.too_many')
  const bigNew = await api('POST', '/api/batches', {
    token: rich.key,
    body: { emails: Array.from({ length: 51 }, (_, i) => `no${i}@alpha-bulk.com`), final: true }
  })
  t.equal(bigNew.status, 400)
  t.equal(bigNew.body.code, 'create_batch.too_many')
  const tooMany = await api('POST', '/api/batches', {
    token: rich.key,
    body: { emails: Array.from({ length: 50 }, (_, i) => `no${i}@alpha-bulk.com`), final: true }
  })
  t.equal(tooMany.status, 202, '50 is within both caps')
  const catchAll = await api('POST', '/api/batches', { token: rich.key, body: { emails: ['ok@alpha-bulk.com'], checks: ['catch_all'], final: true } })
  t.equal(catchAll.status, 403)
  t.equal(catchAll.body.code, 'create_batch.check_not_allowed')
  await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: rich.key, body: { emails: [], final: true } })
})

t.test('a chunk whose batch runs a check the plan no longer allows: 403', async t => {
  const down = await account('downgrade@example.com', 1_000)
  await operatorSetPlan(service.core.ctx, { email: 'downgrade@example.com', plan: 'pro', cycle: 'monthly', period_end: null, grant: false, operator: 'test' })
  await waitUntil(async () => (await api('GET', '/api/subscription', { token: down.token })).body.plan.code === 'pro')
  // A key made on Pro enables catch_all (one made on Free would not).
  down.key = (await api('POST', '/api/keys', { token: down.token, body: { name: 'pro', environment: 'live' } })).body.raw_key
  const r = await api('POST', '/api/batches', { token: down.key, body: { emails: ['ok@alpha-bulk.com'], checks: ['catch_all'], final: false } })
  t.equal(r.status, 202, 'Pro allows catch_all')
  await operatorSetPlan(service.core.ctx, { email: 'downgrade@example.com', plan: 'free', cycle: 'monthly', period_end: null, grant: false, operator: 'test' })
  await waitUntil(async () => (await api('GET', '/api/subscription', { token: down.token })).body.plan.code === 'free')
  const chunk = await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: down.key, body: { emails: ['ok2@alpha-bulk.com'] } })
  t.equal(chunk.status, 403)
  t.equal(chunk.body.code, 'create_batch.check_not_allowed')
  const close = await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: down.key, body: { emails: [], final: true } })
  t.equal(close.status, 202, 'closing intake needs no check: allowed')
  t.equal(close.body.intake, 'closed')
})

t.test('POST /api/batches refuses an empty list, an all-invalid list and unknown checks (400), and changes nothing', async t => {
  const before = (await api('GET', '/api/batches', { token: rich.key })).body.total
  for (const [body, code] of [
    [{ emails: [], final: true }, 'create_batch.empty'],
    [{ emails: ['nope', '  ', '@x'], final: true }, 'create_batch.all_rejected'],
    [{ emails: ['ok@alpha-bulk.com'], checks: ['psychic'], final: true }, 'create_batch.invalid_checks'],
    [{ emails: ['ok@alpha-bulk.com'] }, 'create_batch.invalid_request'],
    [{ emails: 'ok@alpha-bulk.com', final: true }, 'create_batch.invalid_request'],
    [{ emails: ['x'.repeat(1025)], final: true }, 'create_batch.invalid_request']
  ] as const) {
    const r = await api('POST', '/api/batches', { token: rich.key, body })
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 60))
    t.equal(r.body.code, code)
    t.match(r.headers.get('content-type'), /application\/problem\+json/)
  }
  t.equal((await api('GET', '/api/batches', { token: rich.key })).body.total, before)
})

t.test('402 when the wallet cannot pay for a chunk; nothing is reserved or stored', async t => {
  const poor = await account('poor@example.com')
  const w = await wallet(poor.token)
  const perItem = Object.values(costs).reduce((a, b) => a + b, 0) - costs.catch_all
  const n = Math.floor(w.balance / perItem) + 1
  t.ok(n <= 50, `${n} addresses outrun ${w.balance} tokens`)
  const r = await api('POST', '/api/batches', {
    token: poor.key,
    body: {
      emails: Array.from({ length: n }, (_, i) => `ok${i}@alpha-bulk.com`),
      checks: ['syntax', 'typo', 'disposable', 'role', 'free', 'dns', 'smtp'],
      final: true
    }
  })
  t.equal(r.status, 402, JSON.stringify(r.body))
  t.equal(r.body.code, 'add_chunk.insufficient_tokens')
  t.same(await wallet(poor.token), w)
  t.equal((await api('GET', '/api/batches', { token: poor.key })).body.total, 0)
  const open = await api('POST', '/api/batches', { token: poor.key, body: { emails: ['ok@alpha-bulk.com'], checks: ['smtp'], final: false } })
  t.equal(open.status, 202)
  const smtpPrice = SMTP_CHECKS.reduce((sum, c) => sum + costs[c], 0)
  const m = Math.floor((await wallet(poor.token)).balance / smtpPrice) + 1
  const chunk = await api('POST', `/api/batches/${open.body.uuid}/emails`, {
    token: poor.key,
    body: { emails: Array.from({ length: m }, (_, i) => `ok${i}@beta-bulk.com`) }
  })
  t.equal(chunk.status, 402)
  t.equal((await api('GET', `/api/batches/${open.body.uuid}`, { token: poor.key })).body.progress.total, 1, 'the refused chunk left nothing')
  await api('POST', `/api/batches/${open.body.uuid}/emails`, { token: poor.key, body: { emails: [], final: true } })
})

t.test('scopes and ownership: email:verify:bulk to submit, results:read to read; another account sees 404', async t => {
  const readOnly = (await api('POST', '/api/keys', { token: rich.token, body: { name: 'ro', environment: 'live', scopes: ['results:read'] } })).body
    .raw_key as string
  const bulkOnly = (await api('POST', '/api/keys', { token: rich.token, body: { name: 'bo', environment: 'live', scopes: ['email:verify:bulk'] } })).body
    .raw_key as string
  const denied = await api('POST', '/api/batches', { token: readOnly, body: { emails: ['ok@alpha-bulk.com'], final: true } })
  t.equal(denied.status, 403)
  const r = await api('POST', '/api/batches', { token: bulkOnly, body: { emails: ['ok@alpha-bulk.com'], checks: ['smtp'], final: false } })
  t.equal(r.status, 202)
  t.equal((await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: readOnly, body: { emails: ['ok2@alpha-bulk.com'] } })).status, 403)
  t.equal((await api('GET', `/api/batches/${r.body.uuid}`, { token: bulkOnly })).status, 403)
  t.equal((await api('GET', `/api/batches/${r.body.uuid}/results`, { token: bulkOnly })).status, 403)
  t.equal((await api('GET', '/api/batches', { token: bulkOnly })).status, 403)
  t.equal((await api('GET', `/api/batches/${r.body.uuid}`, { token: readOnly })).status, 200)
  t.equal((await api('GET', '/api/batches')).status, 401)
  t.equal((await api('POST', '/api/batches', { body: { emails: ['a@b.com'], final: true } })).status, 401)
  t.equal((await api('GET', `/api/batches/${r.body.uuid}`)).status, 401)
  t.equal((await api('GET', `/api/batches/${r.body.uuid}/results`)).status, 401)
  t.equal((await api('POST', `/api/batches/${r.body.uuid}/emails`, { body: { emails: ['a@b.com'] } })).status, 401)
  t.equal((await api('GET', `/api/batches/${r.body.uuid}`, { token: 'sk_live_not-a-key' })).status, 401)
  const other = await account('other@example.com')
  for (const path of [`/api/batches/${r.body.uuid}`, `/api/batches/${r.body.uuid}/results`])
    t.equal((await api('GET', path, { token: other.key })).status, 404, path)
  const foreign = await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: other.key, body: { emails: ['ok@alpha-bulk.com'] } })
  t.equal(foreign.status, 404)
  t.equal((await api('GET', '/api/batches/not-a-uuid', { token: rich.key })).status, 400)
  t.equal((await api('GET', '/api/batches/0193a1f2-7c4e-7a10-9b2c-3d4e5f607182', { token: rich.key })).status, 404)
  t.equal((await api('GET', '/api/batches/0193a1f2-7c4e-7a10-9b2c-3d4e5f607182/results', { token: rich.key })).status, 404)
  t.equal((await api('POST', '/api/batches/0193a1f2-7c4e-7a10-9b2c-3d4e5f607182/emails', { token: rich.key, body: { emails: ['a@b.com'] } })).status, 404)
  await api('POST', `/api/batches/${r.body.uuid}/emails`, { token: bulkOnly, body: { emails: [], final: true } })
})

t.test('GET /api/batches: newest first, paginated; results pages and CSV', async t => {
  const list = await api('GET', '/api/batches?limit=2', { token: rich.key })
  t.equal(list.status, 200)
  t.equal(list.body.items.length, 2)
  t.equal(list.body.limit, 2)
  const all = await api('GET', '/api/batches?limit=96', { token: rich.key })
  t.equal(all.body.total, all.body.items.length)
  const created = all.body.items.map((b: any) => b.created_at)
  t.same(created, [...created].sort().reverse(), 'newest first')
  t.same((await api('GET', '/api/batches?limit=2&offset=1', { token: rich.key })).body.items[0].uuid, all.body.items[1].uuid)
  t.equal((await api('GET', '/api/batches?limit=0', { token: rich.key })).status, 400)
  t.equal((await api('GET', '/api/batches?offset=-1', { token: rich.key })).status, 400)

  const emails = Array.from({ length: 30 }, (_, i) => `${i % 3 === 0 ? 'ok' : 'no'}${i}@gamma-bulk.com`)
  const r = await api('POST', '/api/batches', { token: rich.key, body: { emails: [...emails, 'a,b "quoted"@x'], checks: ['smtp'], final: true } })
  await completed(api, rich.key, r.body.uuid)
  const page = await api('GET', `/api/batches/${r.body.uuid}/results?limit=5&offset=10`, { token: rich.key })
  t.equal(page.status, 200)
  t.same(
    page.body.items.map((x: any) => x.index),
    [10, 11, 12, 13, 14]
  )
  t.same(
    page.body.items.map((x: any) => x.email),
    emails.slice(10, 15)
  )
  t.equal(page.body.total, 31)
  t.same((await api('GET', `/api/batches/${r.body.uuid}/results?offset=31`, { token: rich.key })).body.items, [])
  t.equal((await api('GET', `/api/batches/${r.body.uuid}/results?limit=abc`, { token: rich.key })).status, 400)
  const res = await fetch(`${service.url}/api/batches/${r.body.uuid}/results`, { headers: { authorization: `Bearer ${rich.key}`, accept: 'text/csv' } })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/csv/)
  const rows = parse(await res.text(), { columns: true }) as Array<Record<string, string>>
  t.equal(rows.length, 31)
  t.same(
    rows.map(x => x.email),
    [...emails, 'a,b "quoted"@x'],
    'commas and quotes survive (RFC 4180)'
  )
  for (const row of rows.slice(0, 30)) t.equal(row.verdict, expectedVerdict(row.email), row.email)
  t.match(rows[30], { verdict: 'invalid', reason: 'invalid_syntax', position: '31' })
  // Segments: the rows of some verdicts only (a clean list), recomputed here from the whole download.
  for (const segment of [['valid'], ['invalid', 'unknown']]) {
    const part = await fetch(`${service.url}/api/batches/${r.body.uuid}/results?verdict=${segment.join(',')}`, {
      headers: { authorization: `Bearer ${rich.key}`, accept: 'text/csv' }
    })
    t.match(part.headers.get('content-disposition'), new RegExp(`-${segment.join('-')}\\.csv`), 'the file is named for its segment')
    const got = parse(await part.text(), { columns: true }) as Array<Record<string, string>>
    t.same(
      got,
      rows.filter(x => segment.includes(x.verdict)),
      `verdict=${segment.join(',')}: exactly those rows of the whole, in order`
    )
  }
  t.ok(
    rows.some(x => x.verdict === 'valid'),
    'the valid segment is not empty (positive control)'
  )
  const refused = await api('GET', `/api/batches/${r.body.uuid}/results?verdict=valid`, { token: rich.key })
  t.same([refused.status, refused.body.code], [400, 'batch_results.verdict_needs_csv'], 'a JSON page is never filtered')
  const unknownVerdict = await fetch(`${service.url}/api/batches/${r.body.uuid}/results?verdict=great`, {
    headers: { authorization: `Bearer ${rich.key}`, accept: 'text/csv' }
  })
  t.equal(unknownVerdict.status, 400, 'an unknown verdict: 400')
  const json = await fetch(`${service.url}/api/batches/${r.body.uuid}/results`, {
    headers: { authorization: `Bearer ${rich.key}`, accept: 'text/csv;q=0.5, application/json' }
  })
  t.match(json.headers.get('content-type'), /application\/json/, 'JSON when it ranks first')
})

t.test('greylisted items are retried without holding up the rest', async t => {
  const r = await api('POST', '/api/batches', {
    token: rich.key,
    body: { emails: ['ok1@grey-bulk.com', 'no1@grey-bulk.com', 'ok5@alpha-bulk.com'], checks: ['smtp'], final: true }
  })
  t.equal(r.status, 202)
  let sawDeferred = false
  let restDoneEarly = false
  await waitUntil(async () => {
    const items = await allResults(rich.key, r.body.uuid)
    if (items.some(x => x.status === 'deferred')) {
      sawDeferred = true
      if (items.find(x => x.email === 'ok5@alpha-bulk.com')?.status === 'done') restDoneEarly = true
    }
    return items.every(x => x.status === 'done')
  }, 30_000)
  t.ok(sawDeferred, 'greylisted items showed `deferred`')
  t.ok(restDoneEarly, "the other domain's item was done while they waited")
  const items = await allResults(rich.key, r.body.uuid)
  t.same(
    items.map(x => x.verdict),
    ['valid', 'invalid', 'valid']
  )
  await completed(api, rich.key, r.body.uuid)
})

t.test("a part's items are done as they are answered, not when its slowest MX is", async t => {
  const slow = ['ok1@slow-bulk.com', 'ok2@slow-bulk.com', 'no3@slow-bulk.com', 'ok4@slow-bulk.com']
  const r = await api('POST', '/api/batches', { token: rich.key, body: { emails: ['ok7@alpha-bulk.com', ...slow], checks: ['smtp'], final: true } })
  t.equal(r.status, 202)
  let fastFirst = false
  await waitUntil(async () => {
    const items = await allResults(rich.key, r.body.uuid)
    const done = new Set(items.filter(x => x.status === 'done').map(x => x.email))
    if (done.has('ok7@alpha-bulk.com') && slow.some(a => !done.has(a))) fastFirst = true
    return items.every(x => x.status === 'done')
  }, 30_000)
  t.ok(fastFirst, "the fast MX's item was done while the slow MX still answered (one part, one engine call)")
  const b = await completed(api, rich.key, r.body.uuid)
  t.same(b.results.by_verdict, { valid: 4, invalid: 1, risky: 0, unknown: 0 }, 'every item recorded once')
})

t.test('2,000 addresses in 4 chunks against the mail world: every result its ground truth, the wallet the exact cost', async t => {
  const pro = await account('pro@example.com', 50_000)
  await operatorSetPlan(service.core.ctx, { email: 'pro@example.com', plan: 'pro', cycle: 'monthly', period_end: null, grant: false, operator: 'test' })
  await waitUntil(async () => (await api('GET', '/api/subscription', { token: pro.token })).body.limits.max_batch_size === 5_000)
  const before = await wallet(pro.token)
  const emails = Array.from({ length: 2_000 }, (_, i) => `${i % 4 === 0 ? 'ok' : 'no'}${i}@${i % 10 === 9 ? 'nowhere-bulk.com' : DOMAINS[i % 4]}`)
  const chunks = [emails.slice(0, 500), emails.slice(500, 1000), emails.slice(1000, 1500), emails.slice(1500)]
  const first = await api('POST', '/api/batches', { token: pro.key, body: { emails: chunks[0], checks: ['smtp'], final: false } })
  t.equal(first.status, 202, JSON.stringify(first.body).slice(0, 200))
  for (const [k, chunk] of chunks.slice(1).entries()) {
    const r = await api('POST', `/api/batches/${first.body.uuid}/emails`, { token: pro.key, body: { emails: chunk, final: k === 2 } })
    t.equal(r.status, 202)
  }
  const b = await completed(api, pro.key, first.body.uuid, 120_000)
  t.same(b.progress, { total: 2_000, processed: 2_000, pending: 0 })
  const results = await allResults(pro.key, first.body.uuid)
  t.equal(results.length, 2_000)
  const wrong = results.filter(x => x.verdict !== expectedVerdict(x.email))
  t.same(wrong.slice(0, 5), [], `${wrong.length} results differ from the world's ground truth`)
  const captured = emails.reduce((sum, e) => sum + charged(e), 0)
  const perItem = SMTP_CHECKS.reduce((sum, c) => sum + costs[c], 0)
  t.equal(b.tokens.reserved, 2_000 * perItem)
  t.equal(b.tokens.captured, captured)
  await waitUntil(async () => (await wallet(pro.token)).reserved === before.reserved)
  t.equal((await wallet(pro.token)).balance, before.balance - captured)
  const asked = new Set(world.transcript.filter(l => / RCPT TO:/i.test(l)).map(l => /<([^>]+)>/.exec(l)?.[1]?.toLowerCase()))
  t.ok(
    emails.filter(e => !e.endsWith('@nowhere-bulk.com')).every(e => asked.has(e)),
    'the world saw a RCPT for every address with a mail server'
  )
})

t.test('batch.completed webhooks: one signed delivery per batch; 410 disables at once; 503 with Retry-After is retried no sooner', async t => {
  const got: Array<{ path: string; at: number; body: string; headers: IncomingMessage['headers'] }> = []
  const busySeen = new Set<string>()
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8')
    })
    req.on('end', () => {
      got.push({ path: req.url ?? '', at: Date.now(), body, headers: req.headers })
      if (req.url === '/gone') {
        res.writeHead(410).end()
        return
      }
      const delivery = String(req.headers['x-service-delivery'])
      if (req.url === '/busy' && !busySeen.has(delivery)) {
        busySeen.add(delivery)
        res.writeHead(503, { 'retry-after': '2' }).end()
        return
      }
      res.writeHead(200).end('ok')
    })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    receiver.close()
  })
  const base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`
  const hook = async (path: string, events: string[]): Promise<{ uuid: string; secret: string }> =>
    (await api('POST', '/api/webhooks', { token: rich.token, body: { url: base + path, events } })).body
  const ok = await hook('/ok', ['batch.completed'])
  const gone = await hook('/gone', ['batch.completed'])
  const busy = await hook('/busy', ['batch.completed'])
  await hook('/jobs', ['job.completed'])
  const to = (path: string): typeof got => got.filter(g => g.path === path)

  const first = await api('POST', '/api/batches', { token: rich.key, body: { emails: ['ok30@alpha-bulk.com'], checks: ['smtp'], final: true } })
  await completed(api, rich.key, first.body.uuid)
  await waitUntil(async () => (await api('GET', `/api/webhooks/${gone.uuid}`, { token: rich.token })).body.status === 'disabled', 15_000)
  t.equal(to('/gone').length, 1, 'one request, then disabled')
  const second = await api('POST', '/api/batches', { token: rich.key, body: { emails: ['ok31@beta-bulk.com'], checks: ['smtp'], final: true } })
  await completed(api, rich.key, second.body.uuid)
  // Positive controls: both batches reached /ok, and the busy endpoint's retries came.
  await waitUntil(() => to('/ok').length >= 2 && to('/busy').length >= 4, 20_000)
  const bodies = to('/ok').map(g => JSON.parse(g.body))
  t.same(bodies.map(b => b.batch_uuid).sort(), [first.body.uuid, second.body.uuid].sort(), 'one delivery per batch')
  t.ok(bodies.every(b => b.event === 'batch.completed' && b.status === 'completed' && Number.isInteger(b.timestamp)))
  for (const g of to('/ok')) {
    const header = String(g.headers['x-service-signature'])
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)
    t.ok(m, header)
    const expected = createHmac('sha256', ok.secret).update(`${m![1]}.${g.body}`).digest('hex')
    t.ok(timingSafeEqual(Buffer.from(expected), Buffer.from(m![2])), 'HMAC-SHA256 over t.body, recomputed')
  }
  t.equal(to('/gone').length, 1, 'the disabled endpoint got nothing for the second batch')
  t.equal(to('/jobs').length, 0, 'an endpoint subscribed to job.completed only hears no batch')
  for (const uuid of [first.body.uuid, second.body.uuid]) {
    const tries = to('/busy').filter(g => JSON.parse(g.body).batch_uuid === uuid)
    t.equal(tries.length, 2, 'a 503, then the retry')
    t.ok(tries[1].at - tries[0].at >= 2_000, `the retry came ${tries[1].at - tries[0].at} ms later (Retry-After: 2; the schedule alone says 200 ms)`)
  }
  t.equal((await api('GET', `/api/webhooks/${busy.uuid}`, { token: rich.token })).body.status, 'active')
  const feed = await api('GET', '/api/notifications?limit=96', { token: rich.token })
  const done = feed.body.items.filter((n: any) => n.kind === 'batch_completed').map((n: any) => n.data.batch_uuid)
  t.ok(done.includes(first.body.uuid) && done.includes(second.body.uuid), 'each completed batch is in the account feed')
})

t.test('intake closes after BATCH_INTAKE_IDLE_S without a chunk', async t => {
  const dir = t.testdir()
  const idle = await startTestService(testConfig(dir, { VERIFIER_DNS_SERVERS: world.dns_server, PLANS_FILE: plans, BATCH_INTAKE_IDLE_S: '1' }))
  t.teardown(() => idle.close())
  const a = client(idle.url)
  const token = await signUp(a, dir, 'idle@example.com')
  const r = await a('POST', '/api/batches', { token, body: { emails: ['ok1@alpha-bulk.com'], checks: ['smtp'], final: false } })
  t.equal(r.status, 202)
  t.equal(r.body.intake, 'open')
  const kept = await a('POST', `/api/batches/${r.body.uuid}/emails`, { token, body: { emails: ['ok2@alpha-bulk.com'] } })
  t.equal(kept.status, 202, 'a chunk within the idle time is accepted')
  let b: any
  await waitUntil(async () => {
    b = (await a('GET', `/api/batches/${r.body.uuid}`, { token })).body
    return b.intake === 'closed'
  }, 15_000)
  t.ok(
    Date.parse(b.closed_at) - Date.parse(b.created_at) >= 1_000,
    `closed ${Date.parse(b.closed_at) - Date.parse(b.created_at)} ms after it was opened, at least the idle time`
  )
  const late = await a('POST', `/api/batches/${r.body.uuid}/emails`, { token, body: { emails: ['ok3@alpha-bulk.com'] } })
  t.equal(late.status, 409)
  await waitUntil(async () => (await a('GET', `/api/batches/${r.body.uuid}`, { token })).body.status === 'completed', 15_000)
})

t.test("batch items count in the account's statistics and the public summary", async t => {
  const who = await account('stats@example.com', 1_000)
  const before = (await api('GET', '/api/stats/summary')).body
  const r = await api('POST', '/api/batches', {
    token: who.key,
    body: { emails: ['ok1@alpha-bulk.com', 'no1@beta-bulk.com', 'no address'], checks: ['smtp'], final: true }
  })
  const b = await completed(api, who.key, r.body.uuid)
  await waitUntil(async () => (await api('GET', '/api/stats/overview?days=1', { token: who.token })).body.totals.completed === 3)
  const o = (await api('GET', '/api/stats/overview?days=1', { token: who.token })).body
  t.match(o.totals, { submitted: 3, completed: 3, failed: 0, tokens_spent: b.tokens.captured })
  t.match(o.verdicts, { valid: 1, invalid: 2 })
  t.match(o.reasons, { accepted_email: 1, mailbox_not_found: 1, invalid_syntax: 1 })
  const after = (await api('GET', '/api/stats/summary')).body
  t.equal(after.verifications - before.verifications, 2, 'the two verified by the engine (the invalid one was never verified)')
})
