// An adapter whose client is an optional dependency: absent, the start fails with the
// variable that asked for it and the package to install; any other failure is its own.
import t from 'tap'
import { optionalAdapter } from '../../src/infra/optional-adapter.ts'

t.test('a missing optional package is named, with the variable that asked for it', async t => {
  const missing = 'svc-no-such-package-for-this-test'
  await t.rejects(
    optionalAdapter('MONGODB_URL', missing, async () => await import(missing)),
    { message: `MONGODB_URL is set, but the package ${missing} is not installed (an optional dependency): npm install ${missing}` }
  )
})

t.test('an installed package loads; another failure is not disguised', async t => {
  t.equal((await optionalAdapter('MONGODB_URL', 'mongodb', async () => await import('mongodb'))).MongoClient.name, 'MongoClient')
  await t.rejects(
    optionalAdapter('MONGODB_URL', 'mongodb', async () => Promise.reject(new TypeError('broken adapter'))),
    { message: 'broken adapter' }
  )
})
