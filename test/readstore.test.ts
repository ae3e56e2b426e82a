import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryReadStore } from '../src/infra/readstore/memory.ts'
import { MongoReadStore } from '../src/infra/readstore/mongodb.ts'
import { readStoreContract } from './support/readstore-contract.ts'

t.test('in-memory read store', async t => {
  readStoreContract(t, async () => new MemoryReadStore())
})

const url = process.env.MONGODB_URL
t.test('MongoDB read store', async t => {
  if (!url) {
    t.plan(0, 'MONGODB_URL is not set: no MongoDB server to run the contract suite against')
    return
  }
  readStoreContract(t, async () => {
    const store = await MongoReadStore.connect(url, { database: `contract_${randomUUID().slice(0, 8)}` })
    const close = store.close.bind(store)
    return Object.assign(store, { close: async () => { await store.drop(); await close() } })
  })
})
