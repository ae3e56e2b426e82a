// The event store on PostgreSQL: the port's contract suite against the local server (a
// database of this file's own), and the property a bare sequence breaks: eight writers
// committing at once while a follower reads the log, every position seen once, in order,
// none skipped. The oracle: the events each writer appended (its own count and ids).
import t from 'tap'
import { PostgresEventStore } from '../../../src/infra/eventstore/postgres.ts'
import type { RecordedEvent } from '../../../src/ports/event-store.ts'
import { eventStoreContract, ev, waitUntil } from '../../support/eventstore-contract.ts'
import { requirePostgres, testDatabase } from '../../support/postgres.ts'

if (await requirePostgres(t)) {
  const url = await testDatabase(t, 'eventstore')
  const schemas = new Map<object, string>()
  const opened: PostgresEventStore[] = []
  t.teardown(async () => {
    for (const s of opened) await s.close()
  })
  const make = (schema: string, poll = 20): PostgresEventStore => {
    const store = new PostgresEventStore(url, { schema, poll_interval_ms: poll })
    schemas.set(store, schema)
    opened.push(store)
    return store
  }

  eventStoreContract(t, {
    async open() {
      return make(`contract_${schemas.size}`)
    },
    async reopen(store) {
      return make(schemas.get(store)!)
    }
  })

  t.test('eight writers at once and a follower: every event read once, in position order, none skipped', async t => {
    const WRITERS = 8
    const EACH = 250
    const writers = Array.from({ length: WRITERS }, () => make('concurrent', 10))
    const follower = make('concurrent', 10)
    const seen: RecordedEvent[] = []
    const sub = follower.subscribeToAll({ from_position: 0 }, e => {
      seen.push(e)
    })
    t.teardown(() => sub.stop())
    const appended = await Promise.all(
      writers.map(async (w, i) => {
        const ids: string[] = []
        for (let n = 0; n < EACH; n++) {
          const e = ev('Counted', { writer: i, n })
          ids.push(e.id!)
          await w.append(`writer-${i}`, [e], { expected_revision: n === 0 ? 'no_stream' : n - 1 })
        }
        return ids
      })
    )
    await waitUntil(() => seen.length >= WRITERS * EACH, 60_000)
    t.equal(seen.length, WRITERS * EACH, 'as many events read as were appended')
    t.same(
      seen.map(e => e.position),
      Array.from({ length: WRITERS * EACH }, (_, i) => i + 1),
      'positions 1 to 2,000, each once, in order: none skipped, none repeated'
    )
    t.same(new Set(seen.map(e => e.id)), new Set(appended.flat()), "the follower read exactly the writers' events")
    for (let i = 0; i < WRITERS; i++) {
      const revisions = seen.filter(e => e.stream === `writer-${i}`).map(e => e.revision)
      t.same(
        revisions,
        Array.from({ length: EACH }, (_, n) => n),
        `writer ${i}: revisions 0 to ${EACH - 1} in order`
      )
    }
  })

  t.test("another process's append wakes a follower at once through LISTEN/NOTIFY, its poll a minute away", async t => {
    const writer = make('notified', 60_000)
    const follower = make('notified', 60_000)
    const seen: Array<{ position: number; at: number }> = []
    const caughtUp = new Promise<void>(resolve => {
      const sub = follower.subscribeToAll({ from_position: 0, on_caught_up: () => resolve() }, e => {
        seen.push({ position: e.position, at: Date.now() })
      })
      t.teardown(() => sub.stop())
    })
    await caughtUp
    // The LISTEN connection opens beside the subscription: a first append is seen by it or by the catch-up.
    await writer.append('notified-0', [ev('Counted', { n: 0 })], { expected_revision: 'no_stream' })
    await waitUntil(() => seen.length === 1, 10_000)
    const delays: number[] = []
    for (let n = 1; n <= 20; n++) {
      const r = await writer.append(`notified-${n}`, [ev('Counted', { n })], { expected_revision: 'no_stream' })
      const at = Date.now()
      await waitUntil(() => seen.some(e => e.position === r.position), 10_000)
      delays.push(seen.find(e => e.position === r.position)!.at - at)
    }
    delays.sort((a, b) => a - b)
    t.comment(`another instance saw each append after ${delays[10]} ms (median), ${delays[19]} ms at most`)
    t.ok(delays[19] < 30_000, 'all 20 seen long before the next poll (60 s): woken by the notification')
  })

  t.test('in one group commit, an event id stored already fails its own append only', async t => {
    const store = make('duplicates')
    const first = ev('First')
    await store.append('dup-a', [first], { expected_revision: 'no_stream' })
    // Asked for in one turn: one group, one transaction.
    const [again, other] = await Promise.allSettled([
      store.append('dup-b', [{ ...first, type: 'Again' }], { expected_revision: 'no_stream' }),
      store.append('dup-c', [ev('Other')], { expected_revision: 'no_stream' })
    ])
    t.equal(again.status, 'rejected', 'the append that reuses an id is refused')
    t.match(other, { status: 'fulfilled', value: { next_expected_revision: 0, position: 2 } }, 'the other commits, at the next position')
    t.same(
      (await store.readAll({ from_position: 0, max_count: 10 })).map(e => [e.position, e.stream, e.type]),
      [
        [1, 'dup-a', 'First'],
        [2, 'dup-c', 'Other']
      ],
      'the log holds no gap and nothing of the refused append'
    )
  })

  t.test('two processes starting at once create the schema once', async t => {
    const a = make('raced')
    const b = make('raced')
    await Promise.all([a.headPosition(), b.headPosition()])
    await a.append('s', [ev('One')], { expected_revision: 'no_stream' })
    t.equal(await b.headPosition(), 1, 'both see one store')
  })
}
