import t from 'tap'
import { InProcessBus } from '../../../src/infra/bus/in-process.ts'
import type { Bus } from '../../../src/ports/bus.ts'
import { busContract } from '../../support/bus-contract.ts'
import { waitUntil } from '../../support/eventstore-contract.ts'
import { postgresAnswers, testDatabase } from '../../support/postgres.ts'
import type { Test } from 'tap'
import type { EventStore } from '../../../src/ports/event-store.ts'
import type { HeldDeliveries } from '../../../src/ports/held-deliveries.ts'

// Instances of one group share one in-process bus (they are "processes" of one deployment).
const buses = new Map<string, InProcessBus>()
busContract(t, async (group, log) => {
  let bus = buses.get(group)
  if (!bus) {
    bus = new InProcessBus(log ?? (() => {}))
    buses.set(group, bus)
  }
  const shared = bus
  const view: Bus = {
    publish: e => shared.publish(e),
    consume: (o, h) => shared.consume(o, h),
    redeliveries: () => shared.redeliveries(),
    close: async () => {}
  }
  return view
})

// Held work survives a restart: with the event store's held
// deliveries, a message whose handler said "later" is kept before the publish counts as
// handled, and a new bus on the same store (the restarted process) delivers it again when
// due; a message given up is kept as a dead letter. The oracle: the deliveries the handlers
// saw, and the table read back through the port.
/** The stores that keep held deliveries beside the event store: SQLite's own table, and PostgreSQL's on a database of the test's own (when the server answers). */
const HOLDING_STORES: Array<[string, (t: Test) => Promise<{ store: EventStore; holds: HeldDeliveries }>]> = [
  [
    'SQLite',
    async t => {
      const { SqliteEventStore } = await import('../../../src/infra/eventstore/sqlite.ts')
      const store = new SqliteEventStore(`${t.testdir()}/events.db`, { poll_interval_ms: 0 })
      t.teardown(() => store.close())
      return { store, holds: store }
    }
  ],
  [
    'PostgreSQL',
    async t => {
      const { StorePool } = await import('../../../src/infra/postgres/pool.ts')
      const { PostgresEventStore } = await import('../../../src/infra/eventstore/postgres.ts')
      const { PostgresHeldDeliveries } = await import('../../../src/infra/postgres/held-deliveries.ts')
      const pool = new StorePool(await testDatabase(t, 'held'), { max: 4, schema: 'public' })
      const store = new PostgresEventStore('', { pool, poll_interval_ms: 0 })
      t.teardown(async () => {
        await store.close()
        await pool.end()
      })
      return { store, holds: new PostgresHeldDeliveries(pool) }
    }
  ]
]
const postgres = await postgresAnswers()
if (!postgres && process.env.REQUIRE_POSTGRES === '1') t.fail('no PostgreSQL answers, and REQUIRE_POSTGRES=1')

for (const [name, open] of HOLDING_STORES)
  t.test(
    `${name}: held deliveries survive a restart; a message given up is kept as a dead letter`,
    { skip: name === 'PostgreSQL' && !postgres ? 'no PostgreSQL answers (set POSTGRES_URL)' : false },
    async t => {
      const { store, holds } = await open(t)
      const durable = {
        holds,
        load: async (stream: string, revision: number) => (await store.readStream(stream, { from_revision: revision, max_count: 1 }))[0] ?? null
      }
      const meta = { occurred_at: new Date().toISOString(), actor: null, correlation_id: null, causation_id: null }
      await store.append('part-1', [{ id: 'held-1', type: 'PartAdded', data: { n: 1 }, metadata: meta }], { expected_revision: 'no_stream' })
      await store.append('part-2', [{ id: 'poison-1', type: 'PartAdded', data: { n: 2 }, metadata: meta }], { expected_revision: 'no_stream' })
      const [held, poison] = [(await store.readStream('part-1'))[0], (await store.readStream('part-2'))[0]]
      const { RetryLater } = await import('../../../src/ports/bus.ts')

      const first = new InProcessBus(() => {}, durable)
      const seenFirst: string[] = []
      await first.consume({ name: 'batches', event_types: ['PartAdded'], concurrency: 1, max_deliveries: 2 }, async e => {
        seenFirst.push(e.id)
        if (e.id === 'held-1') throw new RetryLater(60_000)
        throw new Error('never works')
      })
      await first.publish(held)
      await first.publish(poison)
      t.same(seenFirst.sort(), ['held-1', 'poison-1', 'poison-1'].sort(), 'delivered: the held one once, the poison one twice')
      t.same(
        (await holds.heldDeliveries('batches', 'waiting')).map(h => [h.event_id, h.stream, h.revision]),
        [['held-1', 'part-1', 0]],
        'the held one is kept, with where to read it again'
      )
      const dead = await holds.heldDeliveries('batches', 'dead')
      t.same(
        dead.map(h => [h.event_id, h.attempts, h.last_error]),
        [['poison-1', 2, 'never works']],
        'the one given up is kept as a dead letter'
      )
      await first.close()

      // The restart: the hold comes due at once (the bus's timers do not hold a process open: a service's server does, here an interval).
      const alive = setInterval(() => {}, 50)
      t.teardown(() => clearInterval(alive))
      await holds.holdDelivery({ ...(await holds.heldDeliveries('batches', 'waiting'))[0], due_at: new Date().toISOString() })
      const second = new InProcessBus(() => {}, durable)
      const delivered = new Promise<string>(resolve => {
        void second.consume({ name: 'batches', event_types: ['PartAdded'], concurrency: 1 }, async e => {
          resolve(e.id)
        })
      })
      t.equal(await delivered, 'held-1', 'the restarted bus delivers the held one again')
      await waitUntil(async () => (await holds.heldDeliveries('batches', 'waiting')).length === 0, 5_000)
      t.same(await holds.heldDeliveries('batches', 'waiting'), [], 'and forgets it once handled')
      t.same(
        (await holds.heldSummary()).map(r => [r.consumer, r.state, r.count]),
        [['batches', 'dead', 1]],
        'the dead letter stays, to be seen'
      )
      await second.close()
    }
  )
