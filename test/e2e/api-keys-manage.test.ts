import t from 'tap'
import { randomUUID } from 'node:crypto'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { plansFile } from '../support/plans.ts'
import { SCOPES } from '../../src/domain/api-key/scopes.ts'

// API keys, every row of the interface's table (section 4, "API keys"), and every
// scope-named operation walked from the OpenAPI document (generated from the route table):
// a key lacking the scope gets 403, a key holding only that scope does not. The plan
// file's Free plan allows 40 keys and has rate limits no test reaches, and does not allow
// `catch_all` (a check the plan does not allow).
const dataDir = t.testdir()
const PLANS_FILE = plansFile(dataDir, {
  free: { max_api_keys: 40, rate_limit_per_minute: 1_000_000, allowed_checks: ['syntax', 'typo', 'disposable', 'role', 'free', 'dns', 'smtp'] }
})
const service = await startTestService(testConfig(dataDir, { PLANS_FILE }))
t.teardown(() => service.close())
const api = client(service.url)
const token = await signUp(api, dataDir, 'keyring@example.com')
const other = await signUp(api, dataDir, 'someone-else@example.com')

const create = async (body: Record<string, unknown>, as = token): Promise<any> => {
  const r = await api('POST', '/api/keys', { token: as, body })
  if (r.status !== 201) throw new Error(`create key: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body
}

t.test('GET /api/keys/me: the authenticating key; a session or agent token gets 401', async t => {
  const k = await create({ name: 'whoami', environment: 'test', scopes: ['results:read'], enabled_checks: ['syntax', 'dns'] })
  const r = await api('GET', '/api/keys/me', { token: k.raw_key })
  t.equal(r.status, 200)
  t.match(r.body, { uuid: k.uuid, name: 'whoami', environment: 'test', scopes: ['results:read'], enabled_checks: ['syntax', 'dns'], revoked_at: null })
  t.notOk('raw_key' in r.body, 'the raw key is never shown again')
  t.notOk('key_hash' in r.body)
  t.equal((await api('GET', '/api/keys/me', { token })).status, 401, 'a session token is not a key')
  const agent = (await api('POST', '/api/agents', { token, body: { name: 'a', scopes: ['results:read'] } })).body.token
  t.equal((await api('GET', '/api/keys/me', { token: agent })).status, 401, 'an agent token is not a key')
  t.equal((await api('GET', '/api/keys/me')).status, 401, 'no credential')
  t.equal((await api('GET', '/api/keys/me', { token: 'svc_not-a-key' })).status, 401, 'an unknown key')
})

t.test("GET /api/keys/{uuid}: the key; 404 for another account's or an unknown one; 400 for a malformed uuid", async t => {
  const k = await create({ name: 'reader', environment: 'live' })
  const mine = await api('GET', `/api/keys/${k.uuid}`, { token })
  t.equal(mine.status, 200)
  t.match(mine.body, { uuid: k.uuid, name: 'reader', environment: 'live', revoked_at: null })
  const theirs = await create({ name: 'theirs', environment: 'live' }, other)
  const r = await api('GET', `/api/keys/${theirs.uuid}`, { token })
  t.equal(r.status, 404, "another account's key")
  t.equal(r.body.code, 'api_key.not_found')
  t.equal((await api('GET', `/api/keys/${randomUUID()}`, { token })).status, 404, 'unknown')
  t.equal((await api('GET', '/api/keys/not-a-uuid', { token })).status, 400)
  t.equal((await api('GET', `/api/keys/${k.uuid}`)).status, 401)
})

t.test('PATCH /api/keys/{uuid}: name and/or enabled_checks, omitted fields unchanged; 400, 403, 404', async t => {
  const k = await create({ name: 'patchable', environment: 'live', enabled_checks: ['syntax', 'dns', 'smtp'] })
  const renamed = await api('PATCH', `/api/keys/${k.uuid}`, { token, body: { name: '  crm sync (eu)  ' } })
  t.equal(renamed.status, 200)
  t.equal(renamed.body.name, 'crm sync (eu)', 'trimmed')
  t.same(renamed.body.enabled_checks, ['syntax', 'dns', 'smtp'], 'omitted checks unchanged')
  const checks = await api('PATCH', `/api/keys/${k.uuid}`, { token, body: { enabled_checks: ['smtp', 'syntax'] } })
  t.equal(checks.status, 200)
  t.same(checks.body.enabled_checks, ['syntax', 'smtp'], "in the engine's order")
  t.equal(checks.body.name, 'crm sync (eu)', 'omitted name unchanged')
  t.same((await api('GET', `/api/keys/${k.uuid}`, { token })).body, checks.body, 'the read answers what PATCH answered')
  const self = await api('GET', '/api/keys/me', { token: k.raw_key })
  t.same(self.body.enabled_checks, ['syntax', 'smtp'], 'the key itself sees the change')

  for (const [body, why] of [
    [{ rate_limit_per_minute: 1_000 }, 'a rate limit is never writable'],
    [{ name: 'x', rate_limit: 5 }, 'nor under another name'],
    [{}, 'nothing to change'],
    [{ name: '' }, 'empty name'],
    [{ name: 'x'.repeat(101) }, 'name too long'],
    [{ enabled_checks: [] }, 'no checks'],
    [{ enabled_checks: ['telepathy'] }, 'unknown check'],
    [{ name: 42 }, 'name not a string']
  ] as const) {
    const r = await api('PATCH', `/api/keys/${k.uuid}`, { token, body })
    t.equal(r.status, 400, why)
    t.match(r.body.code, /^update_api_key\./, why)
  }
  const notAllowed = await api('PATCH', `/api/keys/${k.uuid}`, { token, body: { enabled_checks: ['syntax', 'catch_all'] } })
  t.equal(notAllowed.status, 403, 'a check the plan does not allow')
  t.equal(notAllowed.body.code, 'update_api_key.check_not_allowed')
  // A key that manages keys (api_keys:read and the write scope api_keys:create) may not enable checks it does not hold itself.
  const narrow = await create({ name: 'narrow', environment: 'live', scopes: ['api_keys:read', 'api_keys:create'], enabled_checks: ['syntax'] })
  const notHeld = await api('PATCH', `/api/keys/${k.uuid}`, { token: narrow.raw_key, body: { enabled_checks: ['syntax', 'dns'] } })
  t.equal(notHeld.status, 403)
  t.equal(notHeld.body.code, 'update_api_key.check_not_held')
  t.equal(
    (await api('PATCH', `/api/keys/${k.uuid}`, { token: narrow.raw_key, body: { name: 'renamed by a key' } })).status,
    200,
    'a key holding api_keys:read and api_keys:create may rename'
  )
  const theirs = await create({ name: 'theirs', environment: 'live' }, other)
  t.equal((await api('PATCH', `/api/keys/${theirs.uuid}`, { token, body: { name: 'mine now' } })).status, 404, "another account's key")
  t.equal((await api('GET', `/api/keys/${theirs.uuid}`, { token: other })).body.name, 'theirs', 'and it is unchanged')
  t.equal((await api('PATCH', `/api/keys/${randomUUID()}`, { token, body: { name: 'x' } })).status, 404)
  t.equal((await api('PATCH', '/api/keys/nope', { token, body: { name: 'x' } })).status, 400)
  const revoked = await create({ name: 'gone', environment: 'live' })
  await api('DELETE', `/api/keys/${revoked.uuid}`, { token })
  const late = await api('PATCH', `/api/keys/${revoked.uuid}`, { token, body: { name: 'x' } })
  t.equal(late.status, 403, 'a revoked key cannot be changed (a status the interface lists for PATCH)')
  t.equal(late.body.code, 'update_api_key.revoked')
})

t.test('DELETE /api/keys/{uuid}: 200 with the revoked key, the same record on repeat; it stops authenticating at once', async t => {
  const k = await create({ name: 'leaked', environment: 'live', scopes: ['results:read', 'email:verify:single'] })
  t.equal((await api('GET', '/api/jobs', { token: k.raw_key })).status, 200, 'usable before')
  const r = await api('DELETE', `/api/keys/${k.uuid}`, { token })
  t.equal(r.status, 200)
  t.equal(r.body.uuid, k.uuid)
  t.match(r.body.revoked_at, /^\d{4}-\d{2}-\d{2}T/)
  const after = await api('GET', '/api/jobs', { token: k.raw_key })
  t.equal(after.status, 401, 'the next request with the key is refused')
  t.equal((await api('GET', '/api/keys/me', { token: k.raw_key })).status, 401)
  const again = await api('DELETE', `/api/keys/${k.uuid}`, { token })
  t.equal(again.status, 200, 'idempotent')
  t.same(again.body, r.body, 'the same record, the same revoked_at')
  const theirs = await create({ name: 'theirs', environment: 'live' }, other)
  t.equal((await api('DELETE', `/api/keys/${theirs.uuid}`, { token })).status, 404, "another account's key")
  t.equal((await api('GET', '/api/keys/me', { token: theirs.raw_key })).status, 200, 'and it still works')
  t.equal((await api('DELETE', `/api/keys/${randomUUID()}`, { token })).status, 404)
  t.equal((await api('DELETE', '/api/keys/123', { token })).status, 400)
  // A key may revoke itself with api_keys:revoke.
  const selfish = await create({ name: 'self', environment: 'live', scopes: ['api_keys:revoke'] })
  t.equal((await api('DELETE', `/api/keys/${selfish.uuid}`, { token: selfish.raw_key })).status, 200)
  t.equal((await api('DELETE', `/api/keys/${selfish.uuid}`, { token: selfish.raw_key })).status, 401, 'and is refused at once')
})

t.test('every scope-named operation: 403 for a key lacking the scope, not 403 for a key holding only it (from the OpenAPI document)', async t => {
  const doc = (await api('GET', '/openapi.json')).body
  const operations: Array<{ method: string; path: string; scope: string; scopes: string[] }> = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (op?.['x-required-scope'])
        operations.push({
          method: method.toUpperCase(),
          path: path.replaceAll('{uuid}', randomUUID()),
          scope: op['x-required-scope'],
          scopes: op.security.find((s: Record<string, string[]>) => 'api_key' in s).api_key
        })
    }
  }
  t.ok(operations.length >= 20, `${operations.length} operations name a scope`)
  t.same([...new Set(operations.map(o => o.scope))].sort(), [...SCOPES].sort(), 'every scope guards some operation')
  const only: Record<string, string> = {}
  // Live keys: a test key is refused the live wallet whatever its scopes (wallet.live_only); the bodies sent here are refused before anything is charged.
  for (const scope of SCOPES) only[scope] = (await create({ name: `only ${scope}`, environment: 'live', scopes: [scope] })).raw_key
  for (const o of operations) {
    const lacking = only[SCOPES.find(s => s !== o.scope)!]
    const body = o.method === 'GET' || o.method === 'DELETE' ? undefined : {}
    const denied = await api(o.method, o.path, { token: lacking, body })
    t.equal(denied.status, 403, `${o.method} ${o.path.replace(/[0-9a-f-]{36}/, '{uuid}')} without ${o.scope}`)
    t.equal(denied.body?.code, 'auth.missing_scope')
    // A write the interface guards with a read scope also needs its write scope (issue 42 item 5): both listed in its security.
    const all: string[] = o.scopes.length > 1 ? o.scopes : [o.scope]
    if (all.length > 1) {
      const readOnly = await api(o.method, o.path, { token: only[o.scope], body })
      t.equal(readOnly.status, 403, `${o.method} ${o.path.replace(/[0-9a-f-]{36}/, '{uuid}')} with only ${o.scope}: it changes something`)
    }
    const holder = all.length > 1 ? (await create({ name: all.join(' '), environment: 'live', scopes: all })).raw_key : only[o.scope]
    const allowed = await api(o.method, o.path, { token: holder, body })
    t.not(
      allowed.status,
      403,
      `${o.method} ${o.path.replace(/[0-9a-f-]{36}/, '{uuid}')} with ${all.join(' and ')}: ${allowed.status} ${allowed.body?.code ?? ''}`
    )
  }
})
