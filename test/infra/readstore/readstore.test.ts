import t from 'tap'
import { join } from 'node:path'
import { statSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { SqliteReadStore } from '../../../src/infra/readstore/sqlite.ts'
import { SqliteEventStore } from '../../../src/infra/eventstore/sqlite.ts'
import { ev } from '../../support/eventstore-contract.ts'
import { MongoReadStore } from '../../../src/infra/readstore/mongodb.ts'
import type { ReadStore } from '../../../src/ports/read-store.ts'
import { readStoreContract } from '../../support/readstore-contract.ts'
import { PostgresReadStore } from '../../../src/infra/readstore/postgres.ts'
import { requirePostgres, testDatabase } from '../../support/postgres.ts'

t.test('SQLite read store', async t => {
  const dir = t.testdir()
  const files = new Map<ReadStore, string>()
  readStoreContract(t, async same => {
    const file = same ? files.get(same)! : join(dir, `reads-${randomUUID()}.db`)
    const s = new SqliteReadStore(file)
    files.set(s, file)
    return s
  })
})

t.test('PostgreSQL read store (a database of its own on the local server, a schema per store)', async t => {
  if (!(await requirePostgres(t))) return
  const url = await testDatabase(t, 'readstore')
  const schemas = new Map<ReadStore, string>()
  readStoreContract(t, async same => {
    const schema = same ? schemas.get(same)! : `reads_${schemas.size}`
    const s = new PostgresReadStore(url, { schema })
    schemas.set(s, schema)
    return s
  })
})

t.test('SQLite stores: one worker thread checkpoints their WALs into their files while they are open', async t => {
  const dir = t.testdir()
  const file = join(dir, 'reads.db')
  // Two stores of one process share the checkpointer thread; closing one leaves the other's checkpoints going.
  const events = new SqliteEventStore(join(dir, 'events.db'), { checkpoint_interval_ms: 20 })
  const store = new SqliteReadStore(file, { checkpoint_interval_ms: 20 })
  t.teardown(() => store.close())
  const spec = { name: 'notes', projection: 'notes', fields: { n: 'number' as const }, indexes: [] }
  await store.prepare('notes', 'v1', [spec])
  // The oracle: a database file itself (not its WAL) grows by what was written, seen while its store is open.
  const grows = async (path: string, by: number): Promise<number> => {
    const before = statSync(path).size
    let size = before
    for (let tries = 0; tries < 500 && size < before + by; tries++) {
      await new Promise(resolve => setTimeout(resolve, 10))
      size = statSync(path).size
    }
    return size - before
  }
  const eventsGrew = grows(join(dir, 'events.db'), 1_000_000)
  // 1 MB of events and 2 MB of documents over several commits: under SQLite's automatic threshold (1,000 pages of 4 KiB), which the stores turn off anyway.
  for (let b = 0; b < 4; b++)
    await events.append(
      `s-${b}`,
      Array.from({ length: 250 }, () => ev('E', { text: 'x'.repeat(1_000) })),
      { expected_revision: 'no_stream' }
    )
  t.ok((await eventsGrew) >= 1_000_000, "the event store's file grew")
  await events.close()
  const readsGrew = grows(file, 2_000_000)
  for (let b = 0; b < 4; b++) {
    await store.write(
      Array.from({ length: 500 }, (_, i) => ({ op: 'put' as const, spec, doc: { _id: `${b}-${i}`, n: i, text: 'x'.repeat(1_000) } })),
      [{ projection: 'notes', from: b, to: b + 1 }]
    )
  }
  t.ok((await readsGrew) >= 2_000_000, "the read store's file grew, after the event store closed")
  t.equal(await store.collection(spec).count(), 2_000, 'every document readable')
})

const url = process.env.MONGODB_URL
t.test('MongoDB read store', async t => {
  if (!url) {
    t.plan(0, 'MONGODB_URL is not set: no MongoDB server to run the contract suite against')
    return
  }
  const databases = new Map<ReadStore, string>()
  readStoreContract(t, async same => {
    const database = same ? databases.get(same)! : `contract_${randomUUID().slice(0, 8)}`
    const store = await MongoReadStore.connect(url, { database, refresh_ms: 50 })
    databases.set(store, database)
    if (same) return store
    const close = store.close.bind(store)
    return Object.assign(store, {
      close: async () => {
        await store.drop()
        await close()
      }
    })
  })
})
