import t from 'tap'
import { signUp, build } from '../support/service.ts'
import { operatorSetPlan } from '../../src/flows/plan-change/operator-set-plan.ts'

// Behaviour the interface states: a text/plain body
// on a JSON operation is the 415 its document declares; token revocation answers 200 with
// no body and asks what RFC 7009 asks; the protected resource's metadata answers at its
// path-aware location (RFC 9728 §3.1); billing judges the request (400, 409) before it
// answers 503 for a service without Stripe. The oracles: the RFCs' and the interface's
// words, and the service's own document for the 415.
const { dataDir, service, api } = await build(t)
const token = await signUp(api, dataDir, 'exact@example.com')
const key = (await api('POST', '/api/keys', { token, body: { name: 'k', environment: 'test' } })).body.raw_key as string

t.test('a text/plain body on a JSON operation: 415, as declared', async t => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any
  t.ok(doc.paths['/api/verify'].post.responses['415'], 'the document declares 415 for POST /api/verify')
  const r = await fetch(`${service.url}/api/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
    body: 'valid@example.com'
  })
  t.equal(r.status, 415)
  t.match(await r.json(), { status: 415, code: 'request.unsupported_media_type' })
  const json = await api('POST', '/api/verify', { token: key, body: { email: 'valid@example.com' } })
  t.equal(json.status, 202, 'the same with JSON is accepted (positive control)')
})

t.test('POST /oauth/revoke (RFC 7009): 200 with no body; token and client_id required; an unknown client is invalid_client', async t => {
  const c = (await api('POST', '/oauth/register', { body: { client_name: 'revoker', redirect_uris: ['http://127.0.0.1:9/cb'] } })).body.client_id as string
  const form = (f: Record<string, string>): Promise<Response> =>
    fetch(`${service.url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(f) })
  const ok = await form({ token: 'any-token-at-all', client_id: c })
  t.equal(ok.status, 200)
  t.equal(await ok.text(), '', 'no body')
  t.equal(ok.headers.get('content-type'), null, 'and no content type')
  t.equal(ok.headers.get('cache-control'), 'no-store')
  const noToken = await form({ client_id: c })
  t.equal(noToken.status, 400)
  t.match(await noToken.json(), { error: 'invalid_request' }, 'token is REQUIRED (RFC 7009 §2.1)')
  t.equal((await form({ token: 'x' })).status, 400, 'a public client identifies itself with client_id')
  const unknown = await form({ token: 'x', client_id: '01a200f4-4e74-7104-92f0-217355e415da' })
  t.equal(unknown.status, 401)
  t.match(await unknown.json(), { error: 'invalid_client' }, 'RFC 7009 §2.2.1, RFC 6749 §5.2')
})

t.test("GET /.well-known/oauth-protected-resource/mcp (RFC 9728 §3.1) answers the MCP resource's metadata", async t => {
  const r = await api('GET', '/.well-known/oauth-protected-resource/mcp')
  t.equal(r.status, 200)
  t.match(r.body, { resource: `${service.url}/mcp`, authorization_servers: [service.url] })
  t.same(r.body, (await api('GET', '/.well-known/oauth-protected-resource')).body, 'the same as at the root')
})

t.test('billing without Stripe: 400 and 409 first, 503 only for a request it would take', async t => {
  const bad = await api('POST', '/api/billing/checkout', { token, body: { plan: 'platinum', locale: 'en' } })
  t.equal(bad.status, 400)
  t.equal(bad.body.code, 'billing_checkout.unknown_plan')
  t.equal((await api('POST', '/api/billing/checkout', { token, body: { plan: 'pro', locale: 'tlh' } })).body.code, 'billing_checkout.invalid_locale')
  t.equal((await api('POST', '/api/billing/portal', { token, body: { locale: 'tlh' } })).status, 400, 'the portal judges its locale first too')
  const good = await api('POST', '/api/billing/checkout', { token, body: { plan: 'pro', locale: 'en' } })
  t.equal(good.status, 503, 'a request it would take: 503')
  t.equal(good.body.code, 'billing.unavailable')
  await operatorSetPlan(service.core.ctx, { email: 'exact@example.com', plan: 'pro', cycle: 'monthly', period_end: null, grant: false, operator: 'test' })
  const held = await api('POST', '/api/billing/checkout', { token, body: { plan: 'business', locale: 'en' } })
  t.equal(held.status, 409, 'a paid plan held: 409, not 503')
  t.equal(held.body.code, 'billing_checkout.already_subscribed')
})
