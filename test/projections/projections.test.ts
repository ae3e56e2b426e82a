import t from 'tap'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { SqliteReadStore } from '../../src/infra/readstore/sqlite.ts'
import { SqliteDataKeyStore } from '../../src/infra/crypto/keystore.ts'
import { LibsodiumSealer } from '../../src/infra/crypto/sealer.ts'
import { ProjectionRunner } from '../../src/eventsourcing/projection-runner.ts'
import { PROJECTIONS } from '../../src/projections/index.ts'
import { getWallet, WALLET_TRANSACTIONS } from '../../src/projections/wallets.ts'
import { getJob, JOBS } from '../../src/projections/jobs.ts'
import { allEvents, dumpReadModels, replayInto } from '../support/read-models.ts'
import { ev } from '../support/eventstore-contract.ts'
import { collection, type Projection } from '../../src/eventsourcing/projection.ts'
import { PostgresEventStore } from '../../src/infra/eventstore/postgres.ts'
import { PostgresReadStore } from '../../src/infra/readstore/postgres.ts'
import { rebuildProjections } from '../../src/eventsourcing/rebuild.ts'
import { requirePostgres, testDatabase } from '../support/postgres.ts'

const dir = t.testdir()
const keys = new SqliteDataKeyStore(join(dir, 'keys.db'), randomBytes(32))
const sealer = new LibsodiumSealer(keys)
const store = new SqliteEventStore(join(dir, 'events.db'))
t.teardown(async () => {
  await store.close()
  await keys.close()
})

const U = '01a200f4-0000-7000-8000-000000000001'
const J = '01a200f4-0000-7000-8000-000000000101'
const now = '2026-11-22T10:00:00.000Z'
await store.append(
  `user-${U}`,
  [
    ev('UserRegistered', { user_uuid: U, email: await sealer.seal(U, 'jane@example.com'), password_hash: 'x', locale: 'en', registered_at: now }),
    ev('UserConfirmed', { user_uuid: U, confirmed_at: now })
  ],
  { expected_revision: 'no_stream' }
)
await store.append(
  `wallet-${U}`,
  [
    ev('TokensGranted', { user_uuid: U, grant_uuid: 'g', amount: 100, source: 'plan', plan: 'free', reason: 'Free plan', granted_at: now }),
    ev('TokensReserved', { user_uuid: U, job_uuid: J, amount: 3, reserved_at: now }),
    ev('TokensCaptured', { user_uuid: U, job_uuid: J, amount: 1, captured_at: now }),
    ev('TokensReleased', { user_uuid: U, job_uuid: J, amount: 2, reason: 'unused_checks', released_at: now })
  ],
  { expected_revision: 'no_stream' }
)
await store.append(
  `job-${J}`,
  [
    ev('JobQueued', {
      job_uuid: J,
      user_uuid: U,
      email: await sealer.seal(U, 'x@acme.com'),
      checks: ['syntax'],
      cost: 3,
      environment: 'live',
      key_uuid: null,
      queued_at: now
    }),
    ev('JobCompleted', {
      job_uuid: J,
      user_uuid: U,
      verdict: 'valid',
      reason: 'accepted_email',
      score: 100,
      charge: 1,
      result: { normalized: await sealer.seal(U, 'x@acme.com') },
      completed_at: now
    })
  ],
  { expected_revision: 'no_stream' }
)

t.test('the same events in batches of any size give the same read models', async t => {
  const events = await allEvents(store)
  const one = new SqliteReadStore(join(dir, 'one.db'))
  const all = new SqliteReadStore(join(dir, 'all.db'))
  t.teardown(async () => {
    await one.close()
    await all.close()
  })
  await replayInto(one, events, () => 1)
  await replayInto(all, events, () => events.length)
  t.same(await dumpReadModels(one), await dumpReadModels(all))
  const rc = { reads: one, sealer }
  t.match(await getWallet(rc, U), { balance: 99, reserved: 0, spent: 1, granted: 100 })
  t.equal(await one.collection(WALLET_TRANSACTIONS).count({ user_uuid: U }), 4, 'one ledger entry per wallet event')
  const job = await getJob(rc, U, null, J)
  t.match(job, { email: 'x@acme.com', status: 'completed', verdict: 'valid', result: { normalized: 'x@acme.com' } }, 'the query function unseals')
  t.notMatch(JSON.stringify(await one.collection(JOBS).get(J)), /acme/, 'the read model keeps the address sealed')
})

t.test('the runner commits checkpoints with the documents, resumes from them and answers waitFor', async t => {
  const file = join(dir, 'runner.db')
  let reads = new SqliteReadStore(file)
  let runner = new ProjectionRunner(store, PROJECTIONS, reads)
  await runner.start()
  const head = await store.headPosition()
  t.equal(runner.position, head)
  for (const p of PROJECTIONS) t.equal(await reads.getCheckpoint(p.name), head, `${p.name} checkpoint`)
  const r = await store.append(
    `wallet-${U}`,
    [ev('TokensGranted', { user_uuid: U, grant_uuid: 'g2', amount: 5, source: 'operator', plan: null, reason: 'x', granted_at: now })],
    { expected_revision: 3 }
  )
  t.equal(await runner.waitFor(r.position), true)
  t.equal((await getWallet({ reads }, U))?.balance, 104, 'read your writes')
  t.equal(await runner.waitFor(r.position + 1000, 50), false, 'bounded wait')
  await runner.stop()
  await reads.close()

  // A restart resumes from the checkpoints: the events already applied are not applied again
  // (the ledger would hold a second entry per wallet event if they were).
  const r2 = await store.append(
    `wallet-${U}`,
    [ev('TokensGranted', { user_uuid: U, grant_uuid: 'g3', amount: 7, source: 'operator', plan: null, reason: 'y', granted_at: now })],
    { expected_revision: 4 }
  )
  reads = new SqliteReadStore(file)
  runner = new ProjectionRunner(store, PROJECTIONS, reads)
  t.teardown(async () => {
    await runner.stop()
    await reads.close()
  })
  for (const p of PROJECTIONS) t.equal(await reads.getCheckpoint(p.name), r.position, `${p.name} resumes at ${r.position}`)
  await runner.start()
  t.equal(runner.position, r2.position)
  t.equal(await reads.collection(WALLET_TRANSACTIONS).count({ user_uuid: U }), 6, 'each wallet event once in the ledger')
  t.equal((await getWallet({ reads }, U))?.balance, 111)
  const fresh = new SqliteReadStore(join(dir, 'fresh.db'))
  t.teardown(() => fresh.close())
  await replayInto(fresh, await allEvents(store), () => 3)
  t.same(await dumpReadModels(reads), await dumpReadModels(fresh), 'resumed equals replayed from the first event')
})

t.test('on PostgreSQL: the live runner and a rebuild give the read models a SQLite replay gives', async t => {
  if (!(await requirePostgres(t))) return
  const url = await testDatabase(t, 'projections')
  const events = new PostgresEventStore(url, { schema: 'events' })
  const live = new PostgresReadStore(url, { schema: 'reads' })
  const rebuilt = new PostgresReadStore(url, { schema: 'rebuilt' })
  const runner = new ProjectionRunner(events, PROJECTIONS, live)
  t.teardown(async () => {
    await runner.stop()
    await live.close()
    await rebuilt.close()
    await events.close()
  })
  // The same events, appended stream by stream to the PostgreSQL store.
  const source = await allEvents(store)
  for (const stream of [...new Set(source.map(e => e.stream))]) {
    const of = source.filter(e => e.stream === stream)
    await events.append(
      stream,
      of.map(e => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })),
      { expected_revision: 'no_stream' }
    )
  }
  await runner.start()
  t.equal(runner.position, await events.headPosition(), 'the runner caught up')
  const result = await rebuildProjections(events, rebuilt, PROJECTIONS)
  t.equal(result.events, source.length, 'the rebuild read every event')
  t.ok(Object.values(result.switched).every(Boolean), 'and switched every projection')
  const oracle = new SqliteReadStore(join(dir, 'pg-oracle.db'))
  t.teardown(() => oracle.close())
  await replayInto(oracle, await allEvents(events), () => 2)
  const expected = await dumpReadModels(oracle)
  t.same(await dumpReadModels(live), expected, 'live on PostgreSQL equals the SQLite replay')
  t.same(await dumpReadModels(rebuilt), expected, 'rebuilt on PostgreSQL equals it too')
})

t.test('start waits out a long catch-up that keeps moving, and gives up on one that does not move', async t => {
  const events = new SqliteEventStore(join(dir, 'ticks-events.db'))
  const reads = new SqliteReadStore(join(dir, 'ticks.db'))
  await events.append(
    'tick-1',
    Array.from({ length: 24 }, (_, n) => ev('Ticked', { n })),
    { expected_revision: 'no_stream' }
  )
  const TICKS = collection({ name: 'ticks', projection: 'ticks', fields: {}, indexes: [] })
  // 25 ms an event, committed one at a time: 24 events take far longer than the 150 ms allowed without a move.
  const ticks: Projection = {
    name: 'ticks',
    version: 1,
    collections: [TICKS],
    event_types: ['Ticked'],
    async apply(event, writer) {
      await new Promise(resolve => setTimeout(resolve, 25))
      writer.put(TICKS, { _id: String(event.data.n) })
    }
  }

  // Another process holds the projector lease and projects nothing: this one follows checkpoints that never move.
  t.equal(await reads.lease('another-process', 60_000), true)
  const follower = new ProjectionRunner(events, [ticks], reads, { batch: 1, stall_ms: 150 })
  await t.rejects(follower.start(), { message: /did not reach position 24: at 0, not moving for 150 ms/ }, 'a catch-up that does not move gives up')
  await follower.stop()
  await reads.lease('another-process', -1_000)

  const runner = new ProjectionRunner(events, [ticks], reads, { batch: 1, stall_ms: 150 })
  // The event store first: its subscription ends even while the handler finishes the last event.
  t.teardown(async () => {
    await events.close()
    await runner.stop()
    await reads.close()
  })
  await runner.start()
  t.equal(runner.position, await events.headPosition(), 'caught up, however long it took')
  t.equal(await reads.collection(TICKS).count(), 24, 'every event applied')
})

t.test('a batch that fails is not skipped: the checkpoint stays before its events', async t => {
  const events = new SqliteEventStore(join(dir, 'fails-events.db'))
  const reads = new SqliteReadStore(join(dir, 'fails.db'))
  await events.append('fail-1', [ev('Failing', { n: 0 }), ev('Failing', { n: 1 }), ev('Failing', { n: 2 })], { expected_revision: 'no_stream' })
  const FAILS = collection({ name: 'fails', projection: 'fails', fields: {}, indexes: [] })
  // Every batch throws (as a write would on a full disk); the runner retries from its checkpoint.
  const fails: Projection = {
    name: 'fails',
    version: 1,
    collections: [FAILS],
    event_types: ['Failing'],
    async apply() {
      throw new Error('every batch fails')
    }
  }
  const runner = new ProjectionRunner(events, [fails], reads, { batch: 1, stall_ms: 150 })
  // The event store first: its subscriptions end even while a handler finishes an event.
  t.teardown(async () => {
    await events.close()
    await runner.stop()
    await reads.close()
  })
  await t.rejects(runner.start(), { message: /did not reach position 3: at 0, not moving for 150 ms/ }, 'start gives up without a move')
  t.equal(await reads.getCheckpoint('fails'), 0, 'no event was committed as applied')
})

t.test('crypto-shredding: a destroyed key leaves the address unreadable', async t => {
  const other = '01a200f4-0000-7000-8000-0000000000ff'
  const sealed = await sealer.seal(other, 'gone@example.com')
  t.notMatch(sealed, /gone/)
  t.equal(await sealer.unseal(other, sealed), 'gone@example.com')
  await keys.destroy(other)
  t.equal(await sealer.unseal(other, sealed), null)
  await t.rejects(sealer.seal(other, 'again@example.com'), { name: 'DataKeyDestroyedError' })
})
