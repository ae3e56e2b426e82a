// The MongoDB read store's check at connect, against the answers of MongoDB's `hello`
// command as its documentation gives them (a standalone mongod, a replica-set member,
// mongos). No MongoDB server can run here: the contract suite runs where MONGODB_URL is set.
import t from 'tap'
import type { MongoClient } from 'mongodb'
import { requireReplicaSet } from '../../../src/infra/readstore/mongodb.ts'

/** A client whose `admin` database answers `hello` with `reply`. */
const answering = (reply: Record<string, unknown>): Pick<MongoClient, 'db'> =>
  ({ db: () => ({ command: async () => reply }) }) as unknown as Pick<MongoClient, 'db'>

t.test('a standalone server is refused at connect, with what to do', async t => {
  await t.rejects(
    requireReplicaSet(answering({ isWritablePrimary: true, maxWireVersion: 21, ok: 1 })),
    /standalone MongoDB server.*replica set.*--replSet rs0.*rs\.initiate\(\)/
  )
})

t.test('a replica-set member and mongos are taken', async t => {
  await t.resolves(requireReplicaSet(answering({ isWritablePrimary: true, setName: 'rs0', hosts: ['mongo:27017'], ok: 1 })))
  await t.resolves(requireReplicaSet(answering({ isWritablePrimary: true, msg: 'isdbgrid', ok: 1 })))
})
