import t from 'tap'
import { generate } from 'otplib'
import { unlimitedRates } from '../support/plans.ts'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { grantTokens } from '../../src/commands/wallet/grant-tokens.ts'
import { banUser } from '../../src/flows/revoke-sessions/ban-user.ts'
import { unbanUser } from '../../src/commands/user/unban-user.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'

// The write side under concurrency: one wallet under many submissions,
// Idempotency-Key replays, plan caps decided on the write side, what a key may grant,
// bans, and two-factor enabled once. Oracles: the HTTP statuses and the event store's own
// records (counted here, not by the code under test).
const dataDir = t.testdir()
const service = await startTestService(testConfig(dataDir, unlimitedRates(dataDir)))
t.teardown(() => service.close())
const api = client(service.url)
const store = service.core.store
const ctx = service.core.ctx

const userOf = async (token: string): Promise<string> => (await api('GET', '/api/users/me', { token })).body.uuid
const liveKey = async (token: string, body: Record<string, unknown> = {}): Promise<string> => {
  const r = await api('POST', '/api/keys', { token, body: { name: 'k', environment: 'live', ...body } })
  if (r.status !== 201) throw new Error(`key: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.raw_key
}
/** Raw ledger sums of a wallet stream, recomputed here from its events. */
const ledger = (events: RecordedEvent[]): { granted: number; reserved: number; captured: number; released: number; reservations: number } => {
  const sum = { granted: 0, reserved: 0, captured: 0, released: 0, reservations: 0 }
  for (const e of events) {
    const amount = Number(e.data.amount ?? 0)
    if (e.type === 'TokensGranted') sum.granted += amount
    if (e.type === 'TokensReserved') {
      sum.reserved += amount
      sum.reservations++
    }
    if (e.type === 'TokensCaptured') sum.captured += amount
    if (e.type === 'TokensReleased') sum.released += amount
  }
  return sum
}
const statuses = (rs: Array<{ status: number }>): Record<number, number> =>
  rs.reduce<Record<number, number>>((m, r) => {
    m[r.status] = (m[r.status] ?? 0) + 1
    return m
  }, {})

t.test('1,200 concurrent submissions on a wallet holding 1,000: exactly 1,000 accepted, 200 refused for funds, none 409 or 5xx', async t => {
  const token = await signUp(api, dataDir, 'burst@example.com')
  const key = await liveKey(token)
  // A disposable address with the disposable check: a firm verdict without any network, 1 token, captured.
  const rs = await Promise.all(
    Array.from({ length: 1_200 }, (_, i) => api('POST', '/api/verify', { token: key, body: { email: `burst${i}@mailinator.com`, checks: ['disposable'] } }))
  )
  t.same(statuses(rs), { 202: 1_000, 402: 200 })
  t.ok(rs.filter(r => r.status === 402).every(r => r.body.code === 'submit_job.insufficient_tokens'))
  const wallet = await store.readStream(`wallet-${await userOf(token)}`)
  const sums = ledger(wallet)
  t.equal(sums.reservations, 1_000, 'one reservation per accepted job')
  t.equal(sums.granted - sums.reserved + sums.released, 0, 'never overspent: the ledger balance is exactly zero')
  const accepted = new Set(rs.filter(r => r.status === 202).map(r => r.body.uuid))
  t.same(new Set(wallet.filter(e => e.type === 'TokensReserved').map(e => e.data.job_uuid)), accepted, 'the reservations are the accepted jobs')
})

t.test('50 concurrent submissions with one Idempotency-Key: one job, one reservation; one 202, the rest 200 with its uuid', async t => {
  const token = await signUp(api, dataDir, 'idem@example.com')
  const key = await liveKey(token)
  const headers = { 'idempotency-key': 'order-2026-11-23-0001' }
  const rs = await Promise.all(
    Array.from({ length: 50 }, () => api('POST', '/api/verify', { token: key, headers, body: { email: 'once@mailinator.com', checks: ['disposable'] } }))
  )
  t.same(statuses(rs), { 202: 1, 200: 49 })
  const uuids = new Set(rs.map(r => r.body.uuid))
  t.equal(uuids.size, 1, 'every answer names the same job')
  t.ok(rs.filter(r => r.status === 200).every(r => r.headers.get('idempotent-replayed') === 'true'))
  const [job] = uuids
  const wallet = await store.readStream(`wallet-${await userOf(token)}`)
  t.equal(wallet.filter(e => e.type === 'TokensReserved').length, 1, 'one reservation')
  t.equal((await store.readStream(`job-${job}`)).filter(e => e.type === 'JobQueued').length, 1, 'one job')

  const later = await api('POST', '/api/verify', { token: key, headers, body: { email: 'once@mailinator.com', checks: ['disposable'] } })
  t.equal(later.status, 200, 'a later replay: 200 with the original job')
  t.equal(later.body.uuid, job)
  const other = await api('POST', '/api/verify', { token: key, headers, body: { email: 'other@mailinator.com', checks: ['disposable'] } })
  t.equal(other.status, 422, 'the same key with a different body')
  t.equal(other.body.code, 'submit_job.idempotency_key_reused')
  const otherAccount = await liveKey(await signUp(api, dataDir, 'idem-other@example.com'))
  const elsewhere = await api('POST', '/api/verify', { token: otherAccount, headers, body: { email: 'once@mailinator.com', checks: ['disposable'] } })
  t.equal(elsewhere.status, 202, "keys belong to an account: another account's same key is a new job")
  t.not(elsewhere.body.uuid, job)
  for (const bad of ['', 'x'.repeat(256), 'white space', 'ünïcode']) {
    const r = await api('POST', '/api/verify', { token: key, headers: { 'idempotency-key': bad }, body: { email: 'a@mailinator.com' } })
    t.equal(r.status, 400, `Idempotency-Key ${JSON.stringify(bad.slice(0, 12))}`)
    t.equal(r.body.code, 'submit_job.invalid_idempotency_key')
  }
  t.equal((await store.readStream(`wallet-${await userOf(token)}`)).filter(e => e.type === 'TokensReserved').length, 1, 'refused requests reserved nothing')
})

t.test('a refused submission gives its Idempotency-Key back: after a top-up the same key makes the job', async t => {
  const token = await signUp(api, dataDir, 'idem-402@example.com')
  const key = await liveKey(token)
  // 50 at a time (the burst of a thousand is the test below): the point is the empty wallet.
  const drain: Array<{ status: number }> = []
  for (let i = 0; i < 1_000; i += 50)
    drain.push(
      ...(await Promise.all(
        Array.from({ length: 50 }, (_, k) => api('POST', '/api/verify', { token: key, body: { email: `d${i + k}@mailinator.com`, checks: ['disposable'] } }))
      ))
    )
  t.same(statuses(drain), { 202: 1_000 }, "1,000 one-token checks spend the Free plan's tokens")
  const headers = { 'idempotency-key': 'retry-after-top-up' }
  const short = await api('POST', '/api/verify', { token: key, headers, body: { email: 'late@mailinator.com', checks: ['disposable'] } })
  t.equal(short.status, 402)
  await grantTokens(ctx, { email: 'idem-402@example.com', tokens: 5, reason: 'test top-up', operator: 'tap' })
  const again = await api('POST', '/api/verify', { token: key, headers, body: { email: 'late@mailinator.com', checks: ['disposable'] } })
  t.equal(again.status, 202, 'the key was free again')
  const replay = await api('POST', '/api/verify', { token: key, headers, body: { email: 'late@mailinator.com', checks: ['disposable'] } })
  t.same([replay.status, replay.body.uuid], [200, again.body.uuid])
})

t.test('20 concurrent key creations on a plan with a cap of 5 create exactly 5', async t => {
  const token = await signUp(api, dataDir, 'key-cap@example.com')
  const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => api('POST', '/api/keys', { token, body: { name: `k${i}`, environment: 'live' } })))
  t.same(statuses(rs), { 201: 5, 403: 15 })
  t.ok(rs.filter(r => r.status === 403).every(r => r.body.code === 'create_api_key.limit_reached'))
  t.equal((await api('GET', '/api/keys', { token })).body.length, 5)
  const created = (await store.readStream(`apikeys-${await userOf(token)}`)).filter(e => e.type === 'ApiKeyCreated')
  t.equal(created.length, 5, 'five ApiKeyCreated events')
  const agents = await Promise.all(
    Array.from({ length: 10 }, (_, i) => api('POST', '/api/agents', { token, body: { name: `a${i}`, scopes: ['results:read'] } }))
  )
  t.same(statuses(agents), { 201: 2, 403: 8 }, 'agents: the Free cap of 2')
  const hooks = await Promise.all(
    Array.from({ length: 10 }, (_, i) => api('POST', '/api/webhooks', { token, body: { url: `https://hooks.example.com/${i}`, events: ['job.completed'] } }))
  )
  t.same(statuses(hooks), { 201: 2, 403: 8 }, 'webhook endpoints: the Free cap of 2')
})

t.test('a credential grants only what it holds', async t => {
  const token = await signUp(api, dataDir, 'grants@example.com')
  const creator = await liveKey(token, { scopes: ['api_keys:create', 'results:read'], enabled_checks: ['syntax', 'disposable'] })
  const refused = await api('POST', '/api/keys', { token: creator, body: { name: 'x', environment: 'live', scopes: ['webhooks:create'] } })
  t.equal(refused.status, 403, 'a key holding api_keys:create but not webhooks:create cannot grant webhooks:create')
  t.equal(refused.body.code, 'create_api_key.scope_not_held')
  const checks = await api('POST', '/api/keys', { token: creator, body: { name: 'x', environment: 'live', scopes: ['results:read'], enabled_checks: ['dns'] } })
  t.same([checks.status, checks.body.code], [403, 'create_api_key.check_not_held'])
  const narrow = await api('POST', '/api/keys', { token: creator, body: { name: 'x', environment: 'live' } })
  t.equal(narrow.status, 201, 'omitted scopes and checks: the defaults it holds')
  t.same([narrow.body.scopes, narrow.body.enabled_checks], [['results:read'], ['syntax', 'disposable']])
  const same = await api('POST', '/api/keys', { token: creator, body: { name: 'x', environment: 'live', scopes: ['results:read', 'api_keys:create'] } })
  t.equal(same.status, 201, 'what it holds it may grant')
  const agent = (await api('POST', '/api/agents', { token, body: { name: 'a', scopes: ['api_keys:read', 'results:read'] } })).body.token
  t.equal(
    (await api('POST', '/api/keys', { token: agent, body: { name: 'x', environment: 'live' } })).status,
    403,
    'an agent without api_keys:create creates no key'
  )
})

t.test("a ban revokes the account's sessions; a banned account's refresh cookie gets 401, and so does its session after an unban", async t => {
  const email = 'banned@example.com'
  const password = 'correct horse battery staple'
  await signUp(api, dataDir, email, password)
  const login = await api('POST', '/api/auth/login', { body: { email, password } })
  const cookie = /svc_refresh=([^;]*)/.exec(login.headers.get('set-cookie') ?? '')![1]
  const access = login.body.access_token
  t.equal((await api('GET', '/api/users/me', { token: access })).status, 200)
  const banned = await banUser(ctx, email, 'test', 'tap')
  t.match(banned, { banned: true, sessions_revoked: true })
  await service.runner!.waitFor(await store.headPosition())
  const refresh = await api('POST', '/api/auth/refresh', { headers: { cookie: `svc_refresh=${cookie}` } })
  t.equal(refresh.status, 401, 'refresh refuses a banned account')
  t.equal((await api('GET', '/api/users/me', { token: access })).status, 401, 'its access token stops at once')
  const sessions = (await store.readStream(`user-${banned.user_uuid}`)).filter(e => e.type === 'UserBanned')
  t.equal(sessions.length, 1)
  await unbanUser(ctx, email, 'tap')
  await service.runner!.waitFor(await store.headPosition())
  t.equal((await api('POST', '/api/auth/refresh', { headers: { cookie: `svc_refresh=${cookie}` } })).status, 401, 'a session from before the ban stays revoked')
  t.equal((await api('GET', '/api/users/me', { token: access })).status, 401)
  const again = await api('POST', '/api/auth/login', { body: { email, password } })
  t.equal(again.status, 200, 'after the unban, a new sign-in works')
  t.equal((await api('GET', '/api/users/me', { token: again.body.access_token })).status, 200)
})

t.test('two concurrent requests that enable two-factor append exactly one TwoFactorEnabled', async t => {
  const token = await signUp(api, dataDir, 'two-factor-race@example.com')
  const setup = await api('POST', '/api/users/me/2fa/enable', { token })
  const code = await generate({ secret: setup.body.secret } as Parameters<typeof generate>[0])
  const rs = await Promise.all(
    [1, 2, 3].map(() => api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code, password: 'correct horse battery staple' } }))
  )
  t.same(statuses(rs), { 204: 1, 409: 2 })
  const enabled = (await store.readStream(`user-${await userOf(token)}`)).filter(e => e.type === 'TwoFactorEnabled')
  t.equal(enabled.length, 1)
})
