import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { SqliteEventStore } from '../../../src/infra/eventstore/sqlite.ts'
import { existsSync, writeFileSync } from 'node:fs'
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
