import t from 'tap'
import { client, signUp } from '../support/service.ts'
import { npmStartNodeFlags, startSvc, svcEnv } from '../support/processes.ts'

// No read-only credential changes anything (issue 42, item 5). `PATCH /api/keys/{uuid}`
// asked only `api_keys:read`: a Free agent holding just that renamed the production key and
// narrowed its checks, and the integration then failed with `submit_job.check_not_enabled`.
// The interface's 403 for a credential without `api_keys:read` is kept; a change also needs
// `api_keys:create`. The service runs as `npm start` runs it. The oracles: the key read back
// (name, checks) and the OpenAPI document's own security requirements, swept over HTTP with
// a key holding every read scope.
const dataDir = t.testdir()
const svc = await startSvc(t, ['serve'], svcEnv(dataDir), npmStartNodeFlags())
const api = client(svc.url)
const token = await signUp(api, dataDir, 'read-only@example.com')
const READ_SCOPES = ['results:read', 'usage:read', 'billing:read', 'api_keys:read', 'webhooks:read']
const production = (
  await api('POST', '/api/keys', {
    token,
    body: { name: 'production', environment: 'live', scopes: ['email:verify:single', 'results:read'], enabled_checks: ['syntax', 'dns', 'smtp'] }
  })
).body
const keyAsStored = async (): Promise<{ name: string; enabled_checks: string[] }> => {
  const k = (await api('GET', `/api/keys/${production.uuid}`, { token })).body
  return { name: k.name, enabled_checks: k.enabled_checks }
}
const original = { name: 'production', enabled_checks: ['syntax', 'dns', 'smtp'] }

t.test('a Free agent holding api_keys:read alone cannot rename a key or narrow its checks', async t => {
  const agent = await api('POST', '/api/agents', { token, body: { name: 'reader', scopes: ['api_keys:read'] } })
  t.equal(agent.status, 201)
  t.equal((await api('GET', `/api/keys/${production.uuid}`, { token: agent.body.token })).status, 200, 'it reads the key (positive control)')
  for (const body of [{ name: 'taken over' }, { enabled_checks: ['syntax'] }]) {
    const r = await api('PATCH', `/api/keys/${production.uuid}`, { token: agent.body.token, body })
    t.equal(r.status, 403, JSON.stringify(body))
    t.equal(r.body.code, 'auth.missing_scope')
    t.match(r.body.detail, /api_keys:create/)
  }
  t.same(await keyAsStored(), original, 'the key is unchanged')
  const job = await api('POST', '/api/verify', { token: production.raw_key, body: { email: 'someone@example.com', checks: ['smtp'] } })
  t.not(job.body?.code, 'submit_job.check_not_enabled', "the customer's integration still runs its checks")
})

t.test('a key: api_keys:read alone is refused, without api_keys:read the interface 403 stays, with both it changes', async t => {
  const create = async (scopes: string[]): Promise<string> =>
    (await api('POST', '/api/keys', { token, body: { name: scopes.join(' '), environment: 'live', scopes } })).body.raw_key
  const reader = await create(['api_keys:read'])
  const r = await api('PATCH', `/api/keys/${production.uuid}`, { token: reader, body: { name: 'renamed by a reader' } })
  t.equal(r.status, 403)
  t.equal(r.body.code, 'auth.missing_scope')
  const writer = await create(['api_keys:create'])
  const w = await api('PATCH', `/api/keys/${production.uuid}`, { token: writer, body: { name: 'renamed by a writer' } })
  t.equal(w.status, 403, 'api_keys:create without api_keys:read: the 403 the interface names')
  t.match(w.body.detail, /api_keys:read/)
  t.same(await keyAsStored(), original, 'still unchanged')
  const both = await create(['api_keys:read', 'api_keys:create'])
  const ok = await api('PATCH', `/api/keys/${production.uuid}`, { token: both, body: { name: 'renamed by a manager' } })
  t.equal(ok.status, 200, 'a key holding both renames it')
  t.equal((await keyAsStored()).name, 'renamed by a manager')
  const session = await api('PATCH', `/api/keys/${production.uuid}`, { token, body: { name: 'production' } })
  t.equal(session.status, 200, 'a session keeps its full rights')
  t.same(await keyAsStored(), original)
})

t.test('every operation that changes something needs a write scope: a key holding every read scope is refused each one', async t => {
  const doc = (await api('GET', '/openapi.json')).body
  const writes: Array<{ method: string; path: string; scopes: string[] }> = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (method === 'get' || method === 'head') continue
      const keyScopes = (op.security ?? []).find((s: Record<string, string[]>) => 'api_key' in s)?.api_key as string[] | undefined
      // Operations a key may call that name a scope; `/mcp` names none: each tool asks its operation's (a write tool a write scope).
      if (keyScopes === undefined || keyScopes.length === 0) continue
      writes.push({ method: method.toUpperCase(), path: path.replaceAll('{uuid}', production.uuid), scopes: keyScopes })
    }
  }
  t.ok(writes.length >= 10, `${writes.length} operations change something with a key`)
  for (const w of writes)
    t.ok(
      w.scopes.some(s => !s.endsWith(':read')),
      `${w.method} ${w.path}: a write scope among ${w.scopes.join(', ')}`
    )
  const reader = (await api('POST', '/api/keys', { token, body: { name: 'every read scope', environment: 'live', scopes: READ_SCOPES } })).body.raw_key
  for (const w of writes) {
    const r = await api(w.method, w.path, { token: reader, body: w.method === 'DELETE' ? undefined : {} })
    t.equal(r.status, 403, `${w.method} ${w.path}: refused`)
    t.equal(r.body?.code, 'auth.missing_scope')
  }
  t.same(await keyAsStored(), original, 'and the key it aimed at is unchanged')
})
