import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { SqliteEventStore } from '../../../src/infra/eventstore/sqlite.ts'
import { existsSync, writeFileSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { eventStoreContract, ev, waitUntil } from '../../support/eventstore-contract.ts'

const run = promisify(execFile)
const files = new Map<object, string>()
const dir = t.testdir()

eventStoreContract(t, {
  async open() {
    const file = join(dir, `es-${files.size}.db`)
    const store = new SqliteEventStore(file, { poll_interval_ms: 20 })
    files.set(store, file)
    return store
  },
  async reopen(store) {
    const file = files.get(store)!
    const other = new SqliteEventStore(file, { poll_interval_ms: 20 })
    files.set(other, file)
    return other
  }
})

t.test('two OS processes appending to one stream with expected revisions never lose or duplicate a revision', async t => {
  const file = join(dir, 'procs.db')
  new SqliteEventStore(file).close()
  const worker = new URL('../../support/append-worker.ts', import.meta.url).pathname
  const N = 200
  const both = Promise.all([
    run(process.execPath, [worker, file, 'counter-1', 'a', String(N)]),
    run(process.execPath, [worker, file, 'counter-1', 'b', String(N)])
  ])
  // Both processes are up with the store open before either appends (the start barrier).
  await waitUntil(() => existsSync(`${file}.a.ready`) && existsSync(`${file}.b.ready`), 30_000)
  writeFileSync(`${file}.go`, '')
  const [a, b] = await both
  const store = new SqliteEventStore(file)
  t.teardown(() => store.close())
  const events = await store.readStream('counter-1')
  t.equal(events.length, 2 * N, 'every append landed once')
  t.same(
    events.map(e => e.revision),
    Array.from({ length: 2 * N }, (_, i) => i),
    'revisions are contiguous'
  )
  t.equal(events.filter(e => e.data.who === 'a').length, N)
  // The processes really raced: their appends interleave in the stream (one after the other would switch once).
  const switches = events.filter((e, i) => i > 0 && e.data.who !== events[i - 1].data.who).length
  t.ok(switches >= 2, `the two processes' appends interleave (${switches} switches between them)`)
  const conflicts = JSON.parse(a.stdout).conflicts + JSON.parse(b.stdout).conflicts
  t.comment(`conflicts seen and retried: ${conflicts}`)
})

t.test('durable across close and reopen; checkpoints persist', async t => {
  const file = join(dir, 'durable.db')
  const s1 = new SqliteEventStore(file)
  await s1.append('thing-1', [ev('A'), ev('B')], { expected_revision: 'no_stream' })
  await s1.setCheckpoint('relay', 2)
  await s1.close()
  const s2 = new SqliteEventStore(file)
  t.teardown(() => s2.close())
  t.same(
    (await s2.readStream('thing-1')).map(e => e.type),
    ['A', 'B']
  )
  t.equal(await s2.getCheckpoint('relay'), 2)
  t.equal(await s2.getCheckpoint('other'), 0)
})

t.test('appends of one turn commit together: each checked in order, a failing one rejected alone', async t => {
  const store = new SqliteEventStore(join(dir, 'group.db'))
  t.teardown(() => store.close())
  await store.append('kept', [ev('Existing', { n: 0 })], { expected_revision: 'no_stream' })
  const existing = (await store.readStream('kept'))[0]
  // Asked together, before any of them commits.
  const asked = [
    store.append('a', [ev('A1'), ev('A2')], { expected_revision: 'no_stream' }),
    store.append('a', [ev('A3')], { expected_revision: 1 }),
    store.append('b', [ev('B1')], { expected_revision: 5 }),
    store.append('c', [{ ...ev('C1'), id: existing.id }], { expected_revision: 'no_stream' }),
    store.append('d', [ev('D1')], { expected_revision: 'no_stream' })
  ]
  const settled = await Promise.allSettled(asked)
  t.same(
    settled.map(s => s.status),
    ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled'],
    'the second append to a sees the first; b has no revision 5; c reuses an event id'
  )
  t.match((settled[2] as PromiseRejectedResult).reason, { name: 'WrongExpectedRevisionError' })
  t.same(
    (await store.readStream('a')).map(e => [e.type, e.revision]),
    [
      ['A1', 0],
      ['A2', 1],
      ['A3', 2]
    ]
  )
  t.same(await store.readStream('b'), [], 'nothing of the refused append')
  t.same(await store.readStream('c'), [], 'nothing of the append whose event id exists (undone alone)')
  const positions = (await store.readAll({ from_position: 0, max_count: 100 })).map(e => [e.stream, e.position])
  t.same(
    positions,
    [
      ['kept', 1],
      ['a', 2],
      ['a', 3],
      ['a', 4],
      ['d', 5]
    ],
    'one global order, no gap where an append was undone'
  )
  t.same(
    settled.filter(s => s.status === 'fulfilled').map(s => (s as PromiseFulfilledResult<{ position: number }>).value.position),
    [3, 4, 5],
    "each append's position is its last event's"
  )
})

t.test("waiting for another connection's write lock does not stop the event loop", async t => {
  // Another writer (here a second connection of this process, as another process would be)
  // holds the write lock for 300 ms. The append waits for it with timers: the loop keeps
  // turning (the release below is itself a timer of this loop), and the append commits
  // once the lock is free. SQLite's busy handler would sleep inside the call instead: the
  // release could never run, and the append would fail after the 10 s busy timeout.
  const file = join(dir, 'locked.db')
  const store = new SqliteEventStore(file, { poll_interval_ms: 0 })
  t.teardown(() => store.close())
  await store.append('warm-1', [ev('Warm', {})], { expected_revision: 'no_stream' })
  const other = new DatabaseSync(file, { timeout: 0 })
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')
  let ticks = 0
  const ticker = setInterval(() => ticks++, 10)
  const started = Date.now()
  setTimeout(() => other.exec('COMMIT'), 300)
  const appended = await store.append('locked-1', [ev('Locked', {})], { expected_revision: 'no_stream' })
  clearInterval(ticker)
  const waited = Date.now() - started
  t.ok(waited >= 290, `the append waited for the lock (${waited} ms)`)
  t.ok(ticks >= 10, `the event loop turned meanwhile (${ticks} ticks of 10 ms)`)
  t.equal((await store.readStream('locked-1')).length, 1, 'and the event is stored')
  t.ok(appended.position > 1, 'after the one before it')
})
