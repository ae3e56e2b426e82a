import t from 'tap'
import { signUp, build } from '../support/service.ts'

// A credential works only in its own environment: a `svc_test_` key must not add a chunk to a live batch (it would be billed and
// probed live), mint a live key, or change or revoke one; a live key must not add to a
// sandbox batch. Since issue 42 item 10 a key does not even see the other environment's
// batch (404, as another account's); a session (the console) sees both, and acts in the
// environment it names (its test-mode switch) or, adding to a batch, in the batch's. The oracles: the wallet's balance and the batch's totals read back, and
// the keys that still authenticate. Live batches are probed through a resolver that does
// not answer (127.0.101.1: this file owns 127.0.101.0/24), never the internet.
const { dataDir, api } = await build(t, { VERIFIER_DNS_SERVERS: '127.0.101.1:53' })
const token = await signUp(api, dataDir, 'two-worlds@example.com')
const keys = ['email:verify:single', 'email:verify:bulk', 'results:read', 'billing:read', 'api_keys:read', 'api_keys:create', 'api_keys:revoke']
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
  const before = await balance()
  const session = await api('POST', `/api/batches/${batch.body.uuid}/emails`, { token, body: { emails: ['invalid@sandbox.example.com'] } })
  t.equal(session.status, 202, "a session adds in the batch's own environment (the console's test mode)")
  t.same([session.body.environment, session.body.chunk.reserved], ['test', 0], 'still a sandbox batch: nothing reserved')
  t.equal(await balance(), before, 'no live token spent')
  t.equal(
    (await api('POST', `/api/batches/${batch.body.uuid}/emails`, { token: test.raw_key, body: { emails: ['risky@sandbox.example.com'], final: true } })).status,
    202,
    'the test key does'
  )
  t.equal((await api('GET', `/api/batches/${batch.body.uuid}`, { token: test.raw_key })).body.progress.total, 3, 'the test key sees every item')
})

t.test("a session's test mode: the sandbox, free, apart from live data; a key cannot name the other environment", async t => {
  const before = await balance()
  const job = await api('POST', '/api/verify', { token, body: { email: 'valid@sandbox.example.com', environment: 'test' } })
  t.equal(job.status, 202, JSON.stringify(job.body))
  t.same([job.body.environment, job.body.cost], ['test', 0], 'a sandbox job, reserving nothing')
  const list = await api('POST', '/api/batches', {
    token,
    body: { emails: ['valid@sandbox.example.com', 'invalid@sandbox.example.com'], final: true, environment: 'test' }
  })
  t.equal(list.status, 202, JSON.stringify(list.body))
  t.same([list.body.environment, list.body.tokens.reserved], ['test', 0], 'a sandbox list, reserving nothing')
  const estimate = await api('POST', '/api/batches/estimate', { token, body: { addresses: 100, environment: 'test' } })
  t.same([estimate.body.cost, estimate.body.covered], [0, 100], 'the estimate of a test list: free')
  t.equal(await balance(), before, 'no live token reserved')
  // Read back: the test key sees them (they are the sandbox's), the live key does not.
  t.equal((await api('GET', `/api/verify/${job.body.uuid}`, { token: test.raw_key })).status, 200, "the sandbox's job, to the test key")
  t.equal((await api('GET', `/api/verify/${job.body.uuid}`, { token: live.raw_key })).status, 404, 'not the live key')
  t.equal((await api('GET', `/api/batches/${list.body.uuid}`, { token: live.raw_key })).status, 404, "nor the sandbox's list")
  const livePositive = await api('POST', '/api/verify', { token, body: { email: 'someone@live-world.example.com' } })
  t.equal(livePositive.body.environment, 'live', 'without `environment`, a session acts live (positive control)')
  for (const [path, body, code] of [
    ['/api/verify', { email: 'a@sandbox.example.com', environment: 'live' }, 'submit_job.other_environment'],
    ['/api/batches', { emails: ['a@sandbox.example.com'], final: true, environment: 'live' }, 'create_batch.other_environment'],
    ['/api/batches/estimate', { addresses: 1, environment: 'live' }, 'estimate_batch.other_environment']
  ] as const) {
    const r = await api('POST', path, { token: test.raw_key, body })
    t.same([r.status, r.body.code], [400, code], `a test key naming live at ${path}: 400`)
  }
  const own = await api('POST', '/api/verify', { token: test.raw_key, body: { email: 'a@sandbox.example.com', environment: 'test' } })
  t.equal(own.status, 202, 'a key naming its own environment: accepted')
  const other = await api('POST', '/api/verify', { token: live.raw_key, body: { email: 'a@sandbox.example.com', environment: 'test' } })
  t.same([other.status, other.body.code], [400, 'submit_job.other_environment'], 'a live key naming test: 400')
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
