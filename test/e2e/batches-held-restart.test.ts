import t from 'tap'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { startDnsRelay } from '../support/dns-relay.ts'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp } from '../support/service.ts'
import { exited, startSvc, svcEnv } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { unlimitedRates } from '../support/plans.ts'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'

// A list held while egress fails finishes after a restart:
// on the embedded default, a CSV-sized list of 13 addresses is sent while the resolver is
// dead (the egress self-test holds live work rather than burning it as `unknown`), the
// service is killed, and started again with the resolver alive. Before, the in-process bus
// held the parts in memory only: the list stayed "Verifying" for ever with its tokens
// reserved. The oracles: the world's answers (which addresses exist), the held deliveries
// read from the event store's table (the positive control that the parts were held), the
// wallet and the batch read back from the API, and `svc ledger audit`.
// This file owns 127.0.151.0/24.

const cli = new URL('../../src/cli.ts', import.meta.url).pathname
/** `svc audit` on the stores: its exit status and its report. */
const audit = (env: NodeJS.ProcessEnv, ...args: string[]): { status: number | null; report: any } => {
  const r = spawnSync(process.execPath, [cli, 'audit', ...args], { env, encoding: 'utf8' })
  let report: any = null
  try {
    report = JSON.parse(r.stdout.trim().split('\n').pop() ?? '')
  } catch {
    report = { unreadable: r.stdout + r.stderr }
  }
  return { status: r.status, report }
}

const EXISTING = ['ann', 'bob', 'cid', 'dee', 'eve', 'fay', 'gus']
const world = await startMailWorld({
  dns_ip: '127.0.151.1',
  domains: [{ name: 'held-list.com', mx: [{ preference: 10, exchange: 'mx.held-list.com' }] }],
  hosts: [
    {
      name: 'mx.held-list.com',
      ip: '127.0.151.10',
      rcpt: a => (EXISTING.includes(a.split('@')[0]) ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 no such user' })
    }
  ]
})
t.teardown(() => world.close())
const dns = await startDnsRelay(t, world.dns_server, '127.0.151.2')

const dataDir = t.testdir()
const settings = (resolver: string): NodeJS.ProcessEnv =>
  svcEnv(dataDir, {
    VERIFIER_DNS_SERVERS: resolver,
    VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
    VERIFIER_DNS_TIMEOUT_MS: '200',
    VERIFIER_SMTP_TIMEOUT_MS: '2000',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0.5',
    VERIFIER_EGRESS_TEST_MX: 'mx.held-list.com',
    VERIFIER_RESULT_CACHE_TTL_S: '0',
    // A chunk's reservation that arrives before its chunk waits out this grace (held, at most 30 s a time): short here.
    BATCH_CHUNK_GRACE_S: '2',
    ...unlimitedRates(dataDir)
  })

t.test('a list held by a dead resolver completes after a restart, every item answered, nothing reserved', async t => {
  const first = await startSvc(t, ['serve'], settings(dns.server))
  let api = client(first.url)
  await waitUntil(async () => (await api('GET', '/readyz')).status === 200, 20_000)
  const token = await signUp(api, dataDir, 'held-list@example.com')
  const key = (await api('POST', '/api/keys', { token, body: { name: 'live', environment: 'live' } })).body.raw_key as string

  dns.alive = false
  await waitUntil(async () => (await api('GET', '/readyz')).body?.reasons?.some((r: any) => r.problem === 'dns_failing') === true, 20_000)
  const emails = [...EXISTING, 'hal', 'ida', 'jon', 'kim', 'lou', 'max'].map(n => `${n}@held-list.com`)
  const list = await api('POST', '/api/batches', { token: key, body: { emails, final: true } })
  t.equal(list.status, 202, JSON.stringify(list.body))
  const reservedAtStart = list.body.chunk.reserved as number
  t.ok(reservedAtStart > 0, `${reservedAtStart} tokens reserved for the list`)
  // The positive control: its part waits in the held deliveries, and nothing of it was answered.
  const store = new SqliteEventStore(join(dataDir, 'events.db'), { poll_interval_ms: 0 })
  t.teardown(() => store.close())
  await waitUntil(async () => (await store.heldDeliveries('batches', 'waiting')).length > 0, 20_000)
  t.ok((await store.heldDeliveries('batches', 'waiting')).length > 0, 'the list is held, and the hold is kept where a restart finds it')
  t.equal((await api('GET', `/api/batches/${list.body.uuid}`, { token: key })).body.progress.processed, 0, 'nothing answered while held')
  const held = audit(settings(dns.server))
  t.equal(held.status, 0, 'svc audit: a hold within its bound is not a failure')
  t.ok(
    held.report.pending.some((p: any) => p.owner === 'batches' && p.state === 'held' && p.event_type === 'BatchItemsAdded'),
    'svc audit lists the held part'
  )

  first.child.kill('SIGKILL')
  await exited(first.child)
  const second = await startSvc(t, ['serve'], settings(world.dns_server))
  api = client(second.url)
  let batch: any
  await waitUntil(async () => {
    batch = (await api('GET', `/api/batches/${list.body.uuid}?wait=10`, { token: key })).body
    return batch?.status === 'completed'
  }, 60_000).catch(() => undefined)
  t.equal(batch?.status, 'completed', 'the list completes after the restart')
  t.equal(batch?.progress.processed, 13, 'every item answered')
  t.same(batch?.results.by_verdict, { valid: 7, risky: 0, invalid: 6, unknown: 0 }, "with the world's answers")
  let wallet: any
  await waitUntil(async () => {
    wallet = (await api('GET', '/api/wallet', { token: key })).body
    return wallet.reserved === 0
  }, 20_000).catch(() => undefined)
  t.equal(wallet?.reserved, 0, 'nothing stays reserved')
  t.same(await store.heldDeliveries('batches', 'waiting'), [], 'nothing stays held')
  // A chunk's reservation delivered before its chunk waits for it (at most 30 s) in the held deliveries too: finished once that is.
  let after = audit(settings(world.dns_server), '--strict', '--ledger')
  await waitUntil(() => {
    after = audit(settings(world.dns_server), '--strict', '--ledger')
    return after.status === 0
  }, 45_000).catch(() => undefined)
  t.equal(after.status, 0, `svc audit --strict --ledger: nothing pending, the ledger clean: ${JSON.stringify(after.report)}`)
  t.same(after.report.pending, [], 'nothing begun and not finished')
  second.child.kill('SIGTERM')
  await exited(second.child)
})
