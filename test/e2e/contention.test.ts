import t from 'tap'
import { join } from 'node:path'
import { client, signUp } from '../support/service.ts'
import { startSvc, svcEnv } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { unlimitedRates } from '../support/plans.ts'

// One wallet contended from two OS processes: `svc serve`
// and `svc api` on one SQLite event store, each taking half of 1,500 concurrent
// submissions on an account holding 1,000 tokens. Each is accepted or refused for funds,
// none answered 409 or 5xx, and the wallet never overspends; the plan's key cap holds
// across the processes too. The oracle is the stored wallet stream, summed here.

const dataDir = t.testdir()
const env = svcEnv(dataDir, {
  ...unlimitedRates(dataDir)
})
const serve = await startSvc(t, ['serve'], env)
const second = await startSvc(t, ['api'], env)
const a = client(serve.url)
const b = client(second.url)
const token = await signUp(a, dataDir, 'contended@example.com')
const owner = (await a('GET', '/api/users/me', { token })).body.uuid as string
const store = new SqliteEventStore(join(dataDir, 'events.db'), { poll_interval_ms: 0 })
t.teardown(() => store.close())
const count = (rs: Array<{ status: number }>): Record<number, number> =>
  rs.reduce<Record<number, number>>((m, r) => {
    m[r.status] = (m[r.status] ?? 0) + 1
    return m
  }, {})

let key = ''
t.test('20 key creations at once over two processes, cap 5: exactly 5', async t => {
  const rs = await Promise.all(
    Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b)('POST', '/api/keys', { token, body: { name: `k${i}`, environment: 'live' } }))
  )
  t.same(count(rs), { 201: 5, 403: 15 })
  t.equal((await store.readStream(`apikeys-${owner}`)).filter(e => e.type === 'ApiKeyCreated').length, 5)
  key = rs.find(r => r.status === 201)!.body.raw_key
})

t.test('1,500 submissions at once over two processes on a wallet of 1,000 tokens', async t => {
  await waitUntil(async () => (await b('GET', '/api/wallet', { token: key })).status === 200)
  const rs = await Promise.all(
    Array.from({ length: 1_500 }, (_, i) =>
      (i % 2 === 0 ? a : b)('POST', '/api/verify', { token: key, body: { email: `c${i}@mailinator.com`, checks: ['disposable'] } })
    )
  )
  t.same(count(rs), { 202: 1_000, 402: 500 }, 'each accepted or refused for funds; none 409, none 5xx')
  t.ok(count(rs.filter((_, i) => i % 2 === 1))[202] > 0, 'the second process accepted some')
  const wallet = await store.readStream(`wallet-${owner}`)
  const sum = (type: string): number => wallet.filter(e => e.type === type).reduce((s, e) => s + Number(e.data.amount), 0)
  t.equal(wallet.filter(e => e.type === 'TokensReserved').length, 1_000, 'one reservation per accepted job')
  t.equal(sum('TokensGranted') - sum('TokensReserved') + sum('TokensReleased'), 0, 'never overspent')
  await waitUntil(async () => (await store.readStream(`wallet-${owner}`)).filter(e => e.type === 'TokensCaptured').length === 1_000, 60_000)
  // The read model follows the ledger (captures are the workers', not a request's): wait for it to catch up.
  let w: any
  await waitUntil(async () => {
    w = (await a('GET', '/api/wallet', { token: key })).body
    return w.spent === 1_000
  }, 20_000).catch(() => undefined)
  t.same([w.balance, w.reserved, w.spent], [0, 0, 1_000], 'every accepted job charged once, whichever process took it')
})
