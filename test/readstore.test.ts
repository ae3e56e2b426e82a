import t from 'tap'
import { join } from 'node:path'
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
