import t from 'tap'
import { join } from 'node:path'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { InProcessBus } from '../../src/infra/bus/in-process.ts'
import { Relay } from '../../src/eventsourcing/relay.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'
import { ev, waitUntil } from '../support/eventstore-contract.ts'

const dir = t.testdir()

t.test('in-process bus: filtered, ordered starts, retried on failure, duplicates dropped', async t => {
  const errors: string[] = []
  const bus = new InProcessBus(msg => {
    errors.push(msg)
  })
  const seen: string[] = []
  let failures = 0
  await bus.consume({ name: 'a', event_types: ['X'], concurrency: 1 }, async e => {
    if (e.data.fail === true && failures++ < 2) throw new Error('transient')
    seen.push(String(e.data.n))
  })
  const mk = (n: number, type = 'X', extra: Record<string, unknown> = {}): RecordedEvent => ({
    id: `id-${n}`,
    stream: 's',
    revision: n,
    position: n + 1,
    type,
    data: { n, ...extra },
    metadata: { occurred_at: '' }
  })
  await Promise.all([bus.publish(mk(1)), bus.publish(mk(2, 'Y')), bus.publish(mk(3, 'X', { fail: true })), bus.publish(mk(4))])
  t.same(seen, ['1', '4', '3'], 'Y filtered out; the failing one retried after a delay, without holding up the next')
  await bus.publish(mk(1))
  t.same(seen, ['1', '4', '3'], 'a re-published event id is dropped')
  let poison = 0
  await bus.consume({ name: 'b', event_types: ['P'], concurrency: 1, max_deliveries: 3 }, async () => {
    poison++
    throw new Error('always')
  })
  await bus.publish(mk(9, 'P'))
  t.equal(poison, 3, 'a poison message is given up after max deliveries')
  t.equal(errors.length, 1)
  await bus.close()
})

t.test('relay: publishes in order from its checkpoint; a restart re-publishes, never skips', async t => {
  const store = new SqliteEventStore(join(dir, 'relay.db'), { poll_interval_ms: 10 })
  t.teardown(() => store.close())
  for (let i = 0; i < 10; i++) await store.append(`s-${i % 3}`, [ev('X', { i })], { expected_revision: 'any' })
  const bus1 = new InProcessBus()
  const got1: number[] = []
  await bus1.consume({ name: 'c', event_types: ['X'], concurrency: 4 }, async e => {
    got1.push(e.data.i as number)
  })
  const relay1 = new Relay(store, bus1, store, { window: 4 })
  await relay1.start()
  await waitUntil(() => relay1.checkpoint === 10)
  t.same(
    [...got1].sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
  )
  await relay1.stop()
  t.equal(await store.getCheckpoint('relay'), 10)

  for (let i = 10; i < 15; i++) await store.append('s-0', [ev('X', { i })], { expected_revision: 'any' })
  const bus2 = new InProcessBus()
  const got2: number[] = []
  await bus2.consume({ name: 'c', event_types: ['X'], concurrency: 1 }, async e => {
    got2.push(e.data.i as number)
  })
  const relay2 = new Relay(store, bus2, store)
  await relay2.start()
  await waitUntil(() => relay2.checkpoint === 15)
  t.same(got2, [10, 11, 12, 13, 14], 'resumes after the checkpoint')
  await relay2.stop()
})
