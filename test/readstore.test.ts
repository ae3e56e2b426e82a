import t from 'tap'
import { join } from 'node:path'
import { statSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { SqliteReadStore } from '../src/infra/readstore/sqlite.ts'
import { MongoReadStore } from '../src/infra/readstore/mongodb.ts'
import type { ReadStore } from '../src/infra/readstore/port.ts'
import { readStoreContract } from './support/readstore-contract.ts'

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

t.test('SQLite read store: a worker thread checkpoints the WAL into the file while the store is open', async t => {
  const file = join(t.testdir(), 'reads.db')
  const store = new SqliteReadStore(file, { checkpoint_interval_ms: 20 })
  t.teardown(() => store.close())
  const spec = { name: 'notes', projection: 'notes', fields: { n: 'number' as const }, indexes: [] }
  await store.prepare('notes', 'v1', [spec])
  const before = statSync(file).size
  // 2 MB in the WAL over four commits: under SQLite's automatic threshold (1,000 pages of 4 KiB), which the store turns off anyway.
  for (let b = 0; b < 4; b++) {
    await store.write(Array.from({ length: 500 }, (_, i) => ({ op: 'put' as const, spec, doc: { _id: `${b}-${i}`, n: i, text: 'x'.repeat(1_000) } })), [{ projection: 'notes', from: b, to: b + 1 }])
  }
  // The oracle: the database file itself (not the WAL) grows by the documents written, seen while the store is open.
  let size = before
  for (let tries = 0; tries < 500 && size < before + 2_000_000; tries++) {
    await new Promise(resolve => setTimeout(resolve, 10))
    size = statSync(file).size
  }
  t.ok(size >= before + 2_000_000, `the file grew from ${before} to ${size} bytes`)
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
    return Object.assign(store, { close: async () => { await store.drop(); await close() } })
  })
})
