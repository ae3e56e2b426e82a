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
  t.test('blue/green: a rebuilt version serves once activated', async t => {
    const database = `bluegreen_${randomUUID().slice(0, 8)}`
    const live = await MongoReadStore.connect(url, { database, refresh_ms: 50 })
    t.teardown(async () => { await live.drop(); await live.close() })
    await live.collection('jobs').put({ _id: 'j', v: 'old' })
    const next = await MongoReadStore.connect(url, { database, version: live.readVersion + 1 })
    await next.collection('jobs').put({ _id: 'j', v: 'new' })
    t.equal((await live.collection<{ _id: string, v: string }>('jobs').get('j'))?.v, 'old', 'the active version serves during the rebuild')
    t.equal(await next.activate(live.readVersion), true)
    t.equal(await next.activate(live.readVersion), false, 'compare-and-set')
    await new Promise(resolve => setTimeout(resolve, 200))
    t.equal((await live.collection<{ _id: string, v: string }>('jobs').get('j'))?.v, 'new', 'readers follow the switch')
    await next.close()
  })
  readStoreContract(t, async () => {
    const store = await MongoReadStore.connect(url, { database: `contract_${randomUUID().slice(0, 8)}` })
    const close = store.close.bind(store)
    return Object.assign(store, { close: async () => { await store.drop(); await close() } })
  })
})
