// The OAuth 2.1 authorization server over HTTP. Oracles: the interface's table for /oauth/authorize (each validation failure
// → 400, else 302 with state unchanged), RFC 8414 / 7591 / 7636 / 6749 §5.2 / 7009 for the
// rest; PKCE challenges are computed here with node:crypto.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { plansFile } from '../support/plans.ts'
import { operatorSetPlan } from '../../src/flows/plan-change/operator-set-plan.ts'
import { acceptableRedirectUri } from '../../src/commands/oauth/register-client.ts'
import { authorizeByForms, authorizeUrl, consentPage, pkce, raw as rawRequest, tokenRequest } from '../support/oauth-flow.ts'

const dataDir = t.testdir()
// Free allows OAuth clients every scope but usage:read here (Pro does): a token response names what the plan allows.
const FREE_SCOPES = ['email:verify:single', 'email:verify:bulk', 'results:read', 'billing:read', 'api_keys:read', 'webhooks:read']
// No reuse grace: a spent refresh token presented at once is a reuse here (the grace has its own tests in sessions.test.ts).
const service = await startTestService(
  testConfig(dataDir, { PLANS_FILE: plansFile(dataDir, { free: { allowed_scopes: FREE_SCOPES } }), REFRESH_TOKEN_REUSE_GRACE_S: '0' })
)
t.teardown(() => service.close())
const api = client(service.url)
const password = 'correct horse battery staple'
const REDIRECT = 'http://127.0.0.1:9/callback'

const raw = (method: string, path: string, options: { form?: Record<string, string>; cookie?: string } = {}): Promise<Response> =>
  rawRequest(service.url, method, path, options)
async function register(body: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  return await api('POST', '/oauth/register', { body: { client_name: 'Test assistant', redirect_uris: [REDIRECT], ...body } })
}
const authorize = async (clientId: string, email: string, challenge: string, scope?: string, state?: string): Promise<{ code: string; state: string | null }> =>
  await authorizeByForms(service.url, { client_id: clientId, redirect_uri: REDIRECT, email, password, challenge, scope, state })
const token = (form: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }> => tokenRequest(service.url, form)

t.test('metadata: RFC 8414 and RFC 9728', async t => {
  const m = (await api('GET', '/.well-known/oauth-authorization-server')).body
  t.equal(m.issuer, service.url)
  t.match(m, {
    authorization_endpoint: `${service.url}/oauth/authorize`,
    token_endpoint: `${service.url}/oauth/token`,
    registration_endpoint: `${service.url}/oauth/register`,
    revocation_endpoint: `${service.url}/oauth/revoke`
  })
  t.same(m.response_types_supported, ['code'])
  t.same(m.grant_types_supported, ['authorization_code', 'refresh_token'])
  t.same(m.code_challenge_methods_supported, ['S256'])
  t.same(m.token_endpoint_auth_methods_supported, ['none'])
  t.ok(m.scopes_supported.includes('email:verify:single'))
  const pr = (await api('GET', '/.well-known/oauth-protected-resource')).body
  t.same(pr.authorization_servers, [service.url])
  t.equal(pr.resource, `${service.url}/mcp`)
})

t.test('the issuer and resource_metadata come from configuration, never from the Host header', async t => {
  const withHost = async (path: string): Promise<{ status: number; headers: Record<string, unknown>; body: any }> =>
    await new Promise((resolve, reject) => {
      const req = httpRequest(`${service.url}${path}`, { headers: { host: 'evil.example' } }, res => {
        let text = ''
        res.on('data', (c: Buffer) => {
          text += c.toString()
        })
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === '' ? null : JSON.parse(text) })
        })
      })
      req.on('error', reject)
      req.end()
    })
  const m = await withHost('/.well-known/oauth-authorization-server')
  t.equal(m.status, 200)
  t.equal(m.body.issuer, service.url, 'the issuer is where the service listens')
  t.notMatch(JSON.stringify(m.body), /evil\.example/, 'no endpoint names the Host header')
  t.notMatch(JSON.stringify((await withHost('/.well-known/oauth-protected-resource')).body), /evil\.example/)
  const mcp = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const req = httpRequest(`${service.url}/mcp`, { method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json' } }, res => {
      res.resume()
      resolve(res.headers)
    })
    req.on('error', reject)
    req.end('{}')
  })
  t.equal(
    mcp['www-authenticate'],
    `Bearer resource_metadata="${service.url}/.well-known/oauth-protected-resource/mcp"`,
    'the 401 of /mcp points at the configured base'
  )
})

t.test('dynamic client registration (RFC 7591): public clients with exact redirect URIs', async t => {
  const ok = await register()
  t.equal(ok.status, 201)
  t.match(ok.body, {
    client_id: /^[0-9a-f-]{36}$/,
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code']
  })
  for (const [body, error, why] of [
    [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri', 'plain http off loopback'],
    [{ redirect_uris: ['https://app.example/cb#frag'] }, 'invalid_redirect_uri', 'a fragment (RFC 6749 §3.1.2)'],
    [{ redirect_uris: [] }, 'invalid_redirect_uri', 'none'],
    [{ token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata', 'a confidential client'],
    [{ scope: 'api_keys:create' }, 'invalid_client_metadata', 'a scope that is never granted to clients'],
    [{ grant_types: ['implicit'] }, 'invalid_client_metadata', 'the implicit grant']
  ] as const) {
    const r = await register(body as Record<string, unknown>)
    t.equal(r.status, 400, why)
    t.equal(r.body.error, error, why)
  }
})

t.test('GET /oauth/authorize: each validation failure is a 400; otherwise a 302 to the consent page', async t => {
  const c = (await register()).body.client_id as string
  const { challenge } = pkce()
  const good = {
    client_id: c,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'opaque state/with ?&= chars'
  }
  for (const [params, why] of [
    [{ ...good, client_id: undefined }, 'no client_id'],
    [{ ...good, client_id: '01a200f4-4e74-7104-92f0-217355e415da' }, 'an unknown client_id'],
    [{ ...good, client_id: 'not-a-uuid' }, 'a malformed client_id'],
    [{ ...good, redirect_uri: undefined }, 'no redirect_uri'],
    [{ ...good, redirect_uri: `${REDIRECT}/` }, 'a redirect_uri not exactly registered (a trailing slash)'],
    [{ ...good, redirect_uri: 'http://127.0.0.1:9/other' }, 'another path'],
    [{ ...good, response_type: 'token' }, 'response_type token'],
    [{ ...good, response_type: undefined }, 'no response_type'],
    [{ ...good, code_challenge: undefined }, 'no code_challenge'],
    [{ ...good, code_challenge: 'short' }, 'a code_challenge that is not 43 base64url characters'],
    [{ ...good, code_challenge: `${challenge.slice(0, 42)}+` }, 'a code_challenge with a character outside base64url'],
    [{ ...good, code_challenge_method: undefined }, 'no code_challenge_method'],
    [{ ...good, code_challenge_method: 'plain' }, 'code_challenge_method plain']
  ] as const) {
    const r = await raw('GET', authorizeUrl(params))
    t.equal(r.status, 400, why)
    t.match(r.headers.get('content-type'), /^text\/html/)
    t.equal(r.headers.get('location'), null, `${why}: no redirect to an unverified URI`)
  }
  const r = await raw('GET', authorizeUrl(good))
  t.equal(r.status, 302)
  const to = new URL(r.headers.get('location')!, service.url)
  t.equal(to.pathname, '/oauth/consent')
  const scoped = await raw('GET', authorizeUrl({ ...good, scope: 'results:read api_keys:create' }))
  t.equal(scoped.status, 302)
  const narrowed = new URL(scoped.headers.get('location')!, service.url)
  t.equal(
    narrowed.pathname,
    '/oauth/consent',
    'a scope the client may not ask for is left out (RFC 6749 §3.3): no redirect to the client without the user (no open redirector)'
  )
  // The signed request the consent page carries, read here (JWT payload, base64url JSON).
  const carried = JSON.parse(Buffer.from(narrowed.searchParams.get('req')!.split('.')[1], 'base64url').toString('utf8')) as {
    req: { scopes: string[]; state: string }
  }
  t.same(carried.req.scopes, ['results:read'], 'the grantable scope only')
  t.equal(carried.req.state, good.state, 'state carried unchanged')
  t.equal((await raw('GET', authorizeUrl({ ...good, scope: 'api_keys:create' }))).status, 400, 'nothing grantable: 400')
  const consent = await raw('GET', to.pathname + to.search)
  t.equal(consent.status, 200)
  const html = await consent.text()
  t.match(html, /Test assistant/)
  t.match(html, /type="password"/)
  t.notMatch(html, /<script/i, 'no JavaScript')
  t.match(consent.headers.get('content-security-policy'), /frame-ancestors 'none'/)
  t.equal(consent.headers.get('x-frame-options'), 'DENY')
})

t.test('code, token, refresh and revocation: PKCE, single-use codes, rotation, scopes', async t => {
  await signUp(api, dataDir, 'grantor@example.com', password)
  const c = (await register({ scope: 'billing:read results:read email:verify:single' })).body.client_id as string
  const { verifier, challenge } = pkce()
  const { code, state } = await authorize(c, 'grantor@example.com', challenge, 'billing:read results:read')
  t.equal(state, 'xyz-123', 'state carried through unchanged')
  const wrongVerifier = await token({ grant_type: 'authorization_code', code, client_id: c, redirect_uri: REDIRECT, code_verifier: pkce().verifier })
  t.equal(wrongVerifier.status, 400)
  t.equal(wrongVerifier.body.error, 'invalid_grant', 'a wrong verifier')
  const first = await token({ grant_type: 'authorization_code', code, client_id: c, redirect_uri: REDIRECT, code_verifier: verifier })
  t.equal(first.status, 200)
  t.equal(first.headers.get('cache-control'), 'no-store')
  t.match(first.body, { token_type: 'Bearer', expires_in: 900, scope: 'billing:read results:read' })
  t.equal((await api('GET', '/api/wallet', { token: first.body.access_token })).status, 200, 'the access token reaches an "A" operation within its scopes')
  t.equal((await api('POST', '/api/verify', { token: first.body.access_token, body: { email: 'a@example.com' } })).status, 403, 'not beyond them')
  t.equal((await api('GET', '/api/users/me', { token: first.body.access_token })).status, 401, 'nor a session-only operation')
  const again = await token({ grant_type: 'authorization_code', code, client_id: c, redirect_uri: REDIRECT, code_verifier: verifier })
  t.equal(again.body.error, 'invalid_grant', 'a code works once')
  t.equal((await api('GET', '/api/wallet', { token: first.body.access_token })).status, 401, 'and its second use revoked what the first issued')
  t.equal((await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: c })).body.error, 'invalid_grant')

  const second = pkce()
  const code2 = (await authorize(c, 'grantor@example.com', second.challenge)).code
  const other = (await register()).body.client_id as string
  t.equal(
    (await token({ grant_type: 'authorization_code', code: code2, client_id: other, redirect_uri: REDIRECT, code_verifier: second.verifier })).body.error,
    'invalid_grant',
    'a code issued to another client'
  )
  t.equal(
    (
      await token({
        grant_type: 'authorization_code',
        code: code2,
        client_id: '01a200f4-4e74-7104-92f0-217355e415da',
        redirect_uri: REDIRECT,
        code_verifier: second.verifier
      })
    ).body.error,
    'invalid_client',
    'an unknown client'
  )
  const issued = await token({ grant_type: 'authorization_code', code: code2, client_id: c, redirect_uri: REDIRECT, code_verifier: second.verifier })
  t.equal(issued.status, 200, 'a refused exchange does not spend the code')
  const rotated = await token({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token, client_id: c })
  t.equal(rotated.status, 200)
  t.not(rotated.body.refresh_token, issued.body.refresh_token, 'rotated')
  t.equal(rotated.body.scope, issued.body.scope)
  t.equal(
    (await token({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token, client_id: other })).body.error,
    'invalid_grant',
    "another client's refresh"
  )
  t.equal(
    (await token({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token, client_id: c })).body.error,
    'invalid_grant',
    'a spent refresh token…'
  )
  t.equal(
    (await token({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token, client_id: c })).body.error,
    'invalid_grant',
    '…revokes the grant (reuse detection)'
  )
  t.equal((await token({ grant_type: 'password', client_id: c })).body.error, 'unsupported_grant_type')

  const third = pkce()
  const t3 = (
    await token({
      grant_type: 'authorization_code',
      code: (await authorize(c, 'grantor@example.com', third.challenge)).code,
      client_id: c,
      redirect_uri: REDIRECT,
      code_verifier: third.verifier
    })
  ).body
  t.equal(
    (await raw('POST', '/oauth/revoke', { form: { token: t3.refresh_token, client_id: 'someone-else' } })).status,
    401,
    'an unknown client: invalid_client (RFC 7009 §2.2.1)…'
  )
  t.equal((await api('GET', '/api/wallet', { token: t3.access_token })).status, 200, "…and another client's request revokes nothing")
  t.equal((await raw('POST', '/oauth/revoke', { form: { token: t3.refresh_token, client_id: c } })).status, 200)
  t.equal((await api('GET', '/api/wallet', { token: t3.access_token })).status, 401, "revoking the refresh token ends the grant's access at once")
  const sessions = (await api('GET', '/api/users/me/sessions', { token: await signUpToken() })).body
  t.ok(Array.isArray(sessions))
})

t.test("token responses name the scopes the plan allows; the access token is issued by the metadata's issuer (RFC 9068 §2.2)", async t => {
  await signUp(api, dataDir, 'narrow@example.com', password)
  const c = (await register({ scope: 'results:read usage:read' })).body.client_id as string
  const { verifier, challenge } = pkce()
  const { code } = await authorize(c, 'narrow@example.com', challenge, 'results:read usage:read')
  const first = await token({ grant_type: 'authorization_code', code, client_id: c, redirect_uri: REDIRECT, code_verifier: verifier })
  t.equal(first.status, 200)
  t.equal(first.body.scope, 'results:read', 'usage:read was consented but Free does not allow it: not named')
  t.equal((await api('GET', '/api/stats/overview', { token: first.body.access_token })).status, 403, 'and the token cannot use it')
  const claims = JSON.parse(Buffer.from(first.body.access_token.split('.')[1], 'base64url').toString('utf8'))
  const metadata = (await api('GET', '/.well-known/oauth-authorization-server')).body
  t.equal(claims.iss, metadata.issuer, "iss is the authorization server's issuer identifier")
  t.equal(claims.scope, 'results:read usage:read', 'the token carries the consent; its use is held to the plan')
  await operatorSetPlan(service.core.ctx, { email: 'narrow@example.com', plan: 'pro', cycle: 'monthly', period_end: null, grant: false, operator: 'test' })
  const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: c })
  t.equal(refreshed.status, 200)
  t.equal(refreshed.body.scope, 'results:read usage:read', 'on Pro the refresh names both')
  t.equal((await api('GET', '/api/stats/overview', { token: refreshed.body.access_token })).status, 200, 'and usage:read works')
  const session = (await api('POST', '/api/auth/login', { body: { email: 'narrow@example.com', password } })).body.access_token
  t.equal(
    JSON.parse(Buffer.from(session.split('.')[1], 'base64url').toString('utf8')).iss,
    service.core.ctx.config.jwt_issuer,
    "a sign-in's own token keeps the service's JWT_ISSUER"
  )
})

t.test('deny: back to the client with error=access_denied and state', async t => {
  await signUp(api, dataDir, 'denier@example.com', password)
  const c = (await register()).body.client_id as string
  const r = await raw(
    'GET',
    authorizeUrl({ client_id: c, redirect_uri: REDIRECT, response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 's-1' })
  )
  const req = new URL(r.headers.get('location')!, service.url).searchParams.get('req')!
  const { pre, cookie: preCookie } = await consentPage(service.url, req)
  const forged = await raw('POST', '/oauth/consent', { form: { req, pre, action: 'signin', email: 'denier@example.com', password } })
  t.equal(forged.status, 403, "a sign-in posted without the page's pre-sign-in cookie (login CSRF from another site) is refused")
  t.equal(forged.headers.get('set-cookie'), null, 'and signs nobody in')
  const wrong = await raw('POST', '/oauth/consent', {
    form: { req, pre, action: 'signin', email: 'denier@example.com', password: 'not the password' },
    cookie: preCookie
  })
  t.equal(wrong.status, 401, 'a wrong password re-renders the sign-in')
  const signin = await raw('POST', '/oauth/consent', { form: { req, pre, action: 'signin', email: 'denier@example.com', password }, cookie: preCookie })
  const cookie = /svc_consent=[^;]+/.exec(signin.headers.get('set-cookie') ?? '')![0]
  const csrf = /name="csrf" value="([^"]+)"/.exec(await signin.text())![1]
  t.equal((await raw('POST', '/oauth/consent', { form: { req, csrf: 'forged', action: 'approve' }, cookie })).status, 403, 'a forged CSRF token is refused')
  t.equal((await raw('POST', '/oauth/consent', { form: { req, csrf, action: 'approve' } })).status, 403, 'without the sign-in cookie too')
  const denied = await raw('POST', '/oauth/consent', { form: { req, csrf, action: 'deny' }, cookie })
  t.equal(denied.status, 302)
  const to = new URL(denied.headers.get('location')!)
  t.equal(to.searchParams.get('error'), 'access_denied')
  t.equal(to.searchParams.get('state'), 's-1')
  t.equal(to.searchParams.get('code'), null)
})

async function signUpToken(): Promise<string> {
  return (await api('POST', '/api/auth/login', { body: { email: 'grantor@example.com', password } })).body.access_token
}

t.test('redirect URIs (RFC 8252): loopback on any port, no localhost, private-use schemes; RFC error shapes; codes exchanged twice at once', async t => {
  const loop = await register({ redirect_uris: ['http://127.0.0.1/cb'] })
  t.equal(loop.status, 201)
  const { challenge } = pkce()
  const anyPort = await raw(
    'GET',
    authorizeUrl({
      client_id: loop.body.client_id,
      redirect_uri: 'http://127.0.0.1:51234/cb',
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256'
    })
  )
  t.equal(anyPort.status, 302, 'a loopback redirect URI matches on any port (RFC 8252 §7.3)')
  t.equal(
    (
      await raw(
        'GET',
        authorizeUrl({
          client_id: loop.body.client_id,
          redirect_uri: 'http://127.0.0.1:51234/other',
          response_type: 'code',
          code_challenge: challenge,
          code_challenge_method: 'S256'
        })
      )
    ).status,
    400,
    'but not on another path'
  )
  t.equal((await register({ redirect_uris: ['http://localhost:8000/cb'] })).body.error, 'invalid_redirect_uri', 'localhost is not accepted (RFC 8252 §8.3)')
  t.equal((await register({ redirect_uris: ['https://a;sandbox/cb'] })).body.error, 'invalid_redirect_uri', 'a host with odd characters')
  t.equal((await register({ redirect_uris: ['javascript:alert(1)'] })).body.error, 'invalid_redirect_uri')
  t.equal((await register({ redirect_uris: ['com.example.app:/oauth/cb'] })).status, 201, "a native app's private-use scheme (RFC 8252 §7.1)")
  t.equal(
    (await register({ redirect_uris: ['view-source:https://evil.example/'] })).body.error,
    'invalid_redirect_uri',
    'view-source: a scheme browsers treat specially'
  )
  for (const scheme of [
    'chrome://settings/',
    'intent://cb',
    'myapp:/cb',
    'data:text/html,x',
    'file:///etc/passwd',
    'about:blank',
    'blob:https://a.example/1'
  ]) {
    t.notOk(acceptableRedirectUri(scheme), `${scheme}: not a reverse domain name (RFC 8252 §7.1)`)
  }
  for (const scheme of ['com.example.app:/oauth/cb', 'io.github.some-one.tool:/cb']) t.ok(acceptableRedirectUri(scheme), `${scheme}: a private-use scheme`)

  const bare = await raw('POST', '/oauth/token', { form: { code: 'x' } })
  t.equal(bare.status, 400)
  t.equal(bare.headers.get('cache-control'), 'no-store')
  t.match(await bare.json(), { error: 'invalid_request' }, 'a body that fails the schema: the RFC 6749 §5.2 shape')
  const unknown = await token({
    grant_type: 'authorization_code',
    code: 'x',
    client_id: '01a200f4-4e74-7104-92f0-217355e415da',
    redirect_uri: REDIRECT,
    code_verifier: pkce().verifier
  })
  t.equal(unknown.status, 401)
  t.equal(unknown.body.error, 'invalid_client')
  t.equal(
    (await raw('POST', '/oauth/revoke', { form: { token: 'x'.repeat(10_000), client_id: loop.body.client_id } })).status,
    200,
    'RFC 7009: the same 200 for any token, a long one too'
  )

  await signUp(api, dataDir, 'racer@example.com', password)
  const c = (await register()).body.client_id as string
  const p = pkce()
  const { code } = await authorize(c, 'racer@example.com', p.challenge)
  const form = { grant_type: 'authorization_code', code, client_id: c, redirect_uri: REDIRECT, code_verifier: p.verifier }
  const both = await Promise.all([token(form), token(form)])
  t.ok(
    both.some(r => r.body.error === 'invalid_grant'),
    'two exchanges of one code at once: at least one is refused'
  )
  for (const r of both) {
    if (r.status === 200) t.equal((await api('GET', '/api/wallet', { token: r.body.access_token })).status, 401, 'and whatever the other issued is revoked')
  }
})

t.test('CORS for browser-based clients on the discovery, registration, token, revocation and MCP endpoints only', async t => {
  const origin = { origin: 'https://assistant.example' }
  const pre = await fetch(`${service.url}/oauth/token`, {
    method: 'OPTIONS',
    headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }
  })
  t.equal(pre.status, 204, 'a preflight is answered')
  t.equal(pre.headers.get('access-control-allow-origin'), '*')
  t.match(pre.headers.get('access-control-allow-methods'), /POST/)
  t.equal(pre.headers.get('access-control-allow-credentials'), null, 'no credentials (no cookies) cross-origin')
  const meta = await fetch(`${service.url}/.well-known/oauth-authorization-server`, { headers: origin })
  t.equal(meta.headers.get('access-control-allow-origin'), '*')
  const mcp = await fetch(`${service.url}/mcp`, { method: 'POST', headers: { ...origin, 'content-type': 'application/json' }, body: '{}' })
  t.equal(mcp.status, 401)
  t.equal(mcp.headers.get('access-control-allow-origin'), '*')
  t.match(mcp.headers.get('access-control-expose-headers'), /WWW-Authenticate/i, "the 401's WWW-Authenticate is readable cross-origin")
  for (const path of ['/oauth/consent', '/api/wallet', '/api/auth/login']) {
    const r = await fetch(`${service.url}${path}`, { headers: origin })
    t.equal(r.headers.get('access-control-allow-origin'), null, `${path}: no CORS`)
  }
})
