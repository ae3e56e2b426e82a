import t from 'tap'
import { signUp, build } from '../support/service.ts'

// A credential works only in its own environment: a `svc_test_` key must not add a chunk to a live batch (it would be billed and
// probed live), mint a live key, or change or revoke one; a live key must not add to a
// sandbox batch. Since issue 42 item 10 a key does not even see the other environment's
// batch (404, as another account's); a session sees both but adds as a live credential. The oracles: the wallet's balance and the batch's totals read back, and
// the keys that still authenticate. Live batches are probed through a resolver that does
// not answer (127.0.101.1: this file owns 127.0.101.0/24), never the internet.
const { dataDir, api } = await build(t, { VERIFIER_DNS_SERVERS: '127.0.101.1:53' })
const token = await signUp(api, dataDir, 'two-worlds@example.com')
const keys = ['email:verify:bulk', 'results:read', 'billing:read', 'api_keys:read', 'api_keys:create', 'api_keys:revoke']
const create = async (environment: 'live' | 'test', by = token): Promise<any> =>
  await api('POST', '/api/keys', { token: by, body: { name: `${environment} key`, environment, scopes: keys } })
const live = (await create('live')).body
const test = (await create('test')).body
const balance = async (): Promise<number> => (await api('GET', '/api/wallet', { token })).body.balance

t.test('a test key cannot add a chunk to a live batch: not found, nothing reserved, nothing added', async t => {
  const batch = await api('POST', '/api/batches', { token: live.raw_key, body: { emails: ['first@live-world.example.com'], final: false } })
  t.equal(batch.status, 202, 'the live key opens a live batch (positive control)')
  t.equal(batch.body.environment, 'live')
  const before = await balance()
  const r = await api('POST', `/api/batches/${batch.body.uuid}/emails`, {
    token: test.raw_key,
    body: { emails: ['second@live-world.example.com', 'third@live-world.example.com'] }
  })
  t.equal(r.status, 404)
  t.equal(r.body.code, 'batch.not_found')
  t.equal(await balance(), before, 'no live token reserved')
  t.equal((await api('GET', `/api/batches/${batch.body.uuid}`, { token })).body.progress.total, 1, 'nothing added')
  const own = await api('POST', `/api/batches/${batch.body.uuid}/emails`, {
    token: live.raw_key,
    body: { emails: ['second@live-world.example.com'], final: true }
  })
  t.equal(own.status, 202, "its own environment's key still adds")
})

t.test('a live key cannot add a chunk to a sandbox batch', async t => {
  const batch = await api('POST', '/api/batches', { token: test.raw_key, body: { emails: ['valid@sandbox.example.com'], final: false } })
  t.equal(batch.status, 202)
  t.equal(batch.body.environment, 'test')
  const r = await api('POST', `/api/batches/${batch.body.uuid}/emails`, { token: live.raw_key, body: { emails: ['invalid@sandbox.example.com'] } })
  t.equal(r.status, 404)
  t.equal(r.body.code, 'batch.not_found')
  const session = await api('POST', `/api/batches/${batch.body.uuid}/emails`, { token, body: { emails: ['invalid@sandbox.example.com'] } })
  t.equal(session.status, 403, 'nor a session (it sees the batch, but acts as a live credential)')
  t.equal(session.body.code, 'add_chunk.environment_mismatch')
  t.equal(
    (await api('POST', `/api/batches/${batch.body.uuid}/emails`, { token: test.raw_key, body: { emails: ['invalid@sandbox.example.com'], final: true } }))
      .status,
    202,
    'the test key does'
  )
})

t.test('a test key mints test keys only, and never changes or revokes a live key', async t => {
  const minted = await create('live', test.raw_key)
  t.equal(minted.status, 403)
  t.equal(minted.body.code, 'create_api_key.environment_not_held')
  const sandbox = await create('test', test.raw_key)
  t.equal(sandbox.status, 201, 'a test key minted by a test key (positive control)')
  t.match(sandbox.body.raw_key, /^svc_test_/)
  const rename = await api('PATCH', `/api/keys/${live.uuid}`, { token: test.raw_key, body: { name: 'taken over' } })
  t.equal(rename.status, 403)
  t.equal(rename.body.code, 'update_api_key.environment_not_held')
  const revoke = await api('DELETE', `/api/keys/${live.uuid}`, { token: test.raw_key })
  t.equal(revoke.status, 403)
  t.equal(revoke.body.code, 'revoke_api_key.environment_not_held')
  const still = await api('GET', '/api/keys/me', { token: live.raw_key })
  t.equal(still.status, 200, 'the live key still authenticates')
  t.equal(still.body.name, 'live key', 'unchanged')
  t.equal((await api('DELETE', `/api/keys/${sandbox.body.uuid}`, { token: test.raw_key })).status, 200, 'a test key revokes a test key')
  t.equal((await create('test', live.raw_key)).status, 201, 'a live key mints test keys')
})
