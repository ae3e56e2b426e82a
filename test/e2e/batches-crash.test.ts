import t from 'tap'
import { join } from 'node:path'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp } from '../support/service.ts'
import { startSvc, exited, type SvcProcess, svcEnv } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { plansFile } from '../support/plans.ts'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'

// Batches survive a power cut: `svc serve` is killed with
// SIGKILL in the middle of a batch (and, with FAULT_POINT, between a chunk's reservation
// and its items), then started again on the same data. The oracle is the batch and
// wallet streams as stored, summed here: every item has exactly one result, every
// reservation is settled exactly once, the wallet paid what the results charged.
// This file owns 127.0.81.0/24.
const rcpt = (address: string): { code: number; message: string } =>
  /^ok/.test(address) ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' }
const world = await startMailWorld({
  dns_ip: '127.0.81.1',
  domains: [
    { name: 'quick-crash.com', mx: [{ preference: 10, exchange: 'mx.quick-crash.com' }] },
    { name: 'slow-crash.com', mx: [{ preference: 10, exchange: 'mx.slow-crash.com' }] }
  ],
  hosts: [
    { name: 'mx.quick-crash.com', ip: '127.0.81.2', rcpt },
    { name: 'mx.slow-crash.com', ip: '127.0.81.3', rcpt, rcpt_delay_ms: 25 }
  ]
})
t.teardown(() => world.close())

const dataDir = t.testdir()
const plans = plansFile(dataDir, { free: { tokens_per_month: 1_000_000, max_batch_size: 10_000, max_chunk_size: 2_000, rate_limit_per_minute: 1_000_000 } })
const env = svcEnv(dataDir, {
  VERIFIER_DNS_SERVERS: world.dns_server,
  VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
  PLANS_FILE: plans,
  BATCH_CHUNK_GRACE_S: '1'
})

const store = new SqliteEventStore(join(dataDir, 'events.db'), { poll_interval_ms: 0 })
t.teardown(() => store.close())

/** Items with their results, reservations with what settled them: summed from the raw events. */
function audit(
  batch: RecordedEvent[],
  wallet: RecordedEvent[]
): { items: number; results: Map<number, number>; charged: number; reservations: Map<string, { amount: number; captured: number; released: number }> } {
  const results = new Map<number, number>()
  let items = 0
  let charged = 0
  for (const e of batch) {
    if (e.type === 'BatchItemsAdded') items += (e.data.items as unknown[]).length
    if (e.type === 'BatchResultsRecorded') {
      for (const r of e.data.results as Array<{ i: number; charge: number }>) {
        results.set(r.i, (results.get(r.i) ?? 0) + 1)
        charged += r.charge
      }
    }
  }
  const reservations = new Map<string, { amount: number; captured: number; released: number }>()
  for (const e of wallet) {
    const id = String(e.data.reservation_uuid)
    if (e.type === 'TokensReserved' && e.data.batch_uuid === batch[0]?.data.batch_uuid)
      reservations.set(id, { amount: Number(e.data.amount), captured: 0, released: 0 })
    const r = reservations.get(id)
    if (!r) continue
    if (e.type === 'TokensCaptured') r.captured += Number(e.data.amount)
    if (e.type === 'TokensReleased') r.released += Number(e.data.amount)
  }
  return { items, results, charged, reservations }
}

const start = async (extra: NodeJS.ProcessEnv = {}): Promise<SvcProcess> => await startSvc(t, ['serve'], { ...env, ...extra })
let svc = await start()
let api = client(svc.url)
const token = await signUp(api, dataDir, 'crash@example.com')
const owner = (await api('GET', '/api/users/me', { token })).body.uuid as string
const key = (await api('POST', '/api/keys', { token, body: { name: 'bulk', environment: 'live' } })).body.raw_key as string

t.test('SIGKILL while a batch is being verified: after a restart no item is lost, none is charged twice, the batch completes', async t => {
  const quick = Array.from({ length: 300 }, (_, i) => `${i % 2 === 0 ? 'ok' : 'no'}${i}@quick-crash.com`)
  const slow = Array.from({ length: 700 }, (_, i) => `${i % 2 === 0 ? 'ok' : 'no'}${i}@slow-crash.com`)
  const r = await api('POST', '/api/batches', { token: key, body: { emails: quick, checks: ['smtp'], final: false } })
  t.equal(r.status, 202)
  const uuid = r.body.uuid as string
  t.equal((await api('POST', `/api/batches/${uuid}/emails`, { token: key, body: { emails: slow, final: true } })).status, 202)
  // Positive control: the first chunk is done and the second is still being verified.
  await waitUntil(async () => (await api('GET', `/api/batches/${uuid}`, { token: key })).body.progress.processed >= 300, 20_000)
  const mid = (await api('GET', `/api/batches/${uuid}`, { token: key })).body
  t.ok(mid.progress.processed < 1_000, `killed at ${mid.progress.processed} of 1000`)
  svc.child.kill('SIGKILL')
  t.equal((await exited(svc.child)).signal, 'SIGKILL')
  const rcptsBefore = world.transcript.filter(l => /RCPT TO/i.test(l)).length

  svc = await start()
  api = client(svc.url)
  await waitUntil(async () => (await api('GET', `/api/batches/${uuid}`, { token: key })).body.status === 'completed', 60_000)
  await waitUntil(async () => (await api('GET', '/api/wallet', { token })).body.reserved === 0, 20_000)
  const a = audit(await store.readStream(`batch-${uuid}`), await store.readStream(`wallet-${owner}`))
  t.equal(a.items, 1_000)
  t.equal(a.results.size, 1_000, 'every item has a result')
  t.same(
    [...a.results.values()].filter(n => n !== 1),
    [],
    'no item has two'
  )
  for (const [id, res] of a.reservations) t.equal(res.captured + res.released, res.amount, `reservation ${id.slice(0, 8)} settled exactly once`)
  const captured = [...a.reservations.values()].reduce((s, x) => s + x.captured, 0)
  t.equal(captured, a.charged, 'the wallet captured what the results charged')
  const b = (await api('GET', `/api/batches/${uuid}`, { token: key })).body
  t.equal(b.tokens.captured, captured)
  t.same(b.results.by_verdict, { valid: 500, invalid: 500, risky: 0, unknown: 0 }, 'verdicts as the world answers')
  t.ok(world.transcript.filter(l => /RCPT TO/i.test(l)).length > rcptsBefore, 'the restarted service went on verifying')
})

t.test(
  "SIGKILL between a chunk's reservation and its items: the reservation is released, the chunk refused for good, the client's retry counts once",
  async t => {
    const r = await api('POST', '/api/batches', { token: key, body: { emails: ['ok1@quick-crash.com'], checks: ['smtp'], final: false } })
    const uuid = r.body.uuid as string
    await svc.child.kill('SIGTERM')
    await exited(svc.child)
    const crashing = await start({ FAULT_POINT: 'batch.after_reserve' })
    const answered = await client(crashing.url)('POST', `/api/batches/${uuid}/emails`, {
      token: key,
      body: { emails: ['ok2@quick-crash.com', 'ok3@quick-crash.com'], final: true }
    }).catch(() => null)
    t.equal(answered, null, 'no answer: the process died')
    t.equal((await exited(crashing.child)).signal, 'SIGKILL')
    const held = audit(await store.readStream(`batch-${uuid}`), await store.readStream(`wallet-${owner}`))
    const open = [...held.reservations.values()].filter(x => x.captured + x.released < x.amount)
    t.equal(open.length, 1, 'left: one reservation without its chunk')

    svc = await start()
    api = client(svc.url)
    await waitUntil(async () => (await api('GET', '/api/wallet', { token })).body.reserved === 0, 30_000)
    const events = await store.readStream(`batch-${uuid}`)
    t.ok(
      events.some(e => e.type === 'BatchChunkAbandoned'),
      'the chunk was abandoned'
    )
    const retry = await api('POST', `/api/batches/${uuid}/emails`, {
      token: key,
      body: { emails: ['ok2@quick-crash.com', 'ok3@quick-crash.com'], final: true }
    })
    t.equal(retry.status, 202, 'the client sends it again')
    t.equal(retry.body.chunk.accepted, 2)
    await waitUntil(async () => (await api('GET', `/api/batches/${uuid}`, { token: key })).body.status === 'completed', 20_000)
    await waitUntil(async () => (await api('GET', '/api/wallet', { token })).body.reserved === 0, 20_000)
    const a = audit(await store.readStream(`batch-${uuid}`), await store.readStream(`wallet-${owner}`))
    t.equal(a.items, 3)
    for (const [id, res] of a.reservations) t.equal(res.captured + res.released, res.amount, `reservation ${id.slice(0, 8)} settled exactly once`)
    t.equal(
      [...a.reservations.values()].reduce((s, x) => s + x.captured, 0),
      a.charged,
      'only verified items were paid for'
    )
  }
)
