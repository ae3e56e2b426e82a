import t from 'tap'
import { totp, totpNow } from '../support/totp.ts'
import { outboxMailsTo, signUp, build } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// Response headers and session handling:
// security headers on every answer, `no-store` on answers with credentials, and a logout
// that needs the session's refresh token, not only its id.
const { dataDir, service, api } = await build(t)
const password = 'correct horse battery staple'

t.test('security headers on the API; no-store on token answers', async t => {
  const r = await api('GET', '/api/config')
  t.equal(r.headers.get('x-content-type-options'), 'nosniff')
  t.match(r.headers.get('content-security-policy'), /default-src 'none'/)
  t.match(r.headers.get('content-security-policy'), /frame-ancestors 'none'/)
  t.ok(r.headers.get('strict-transport-security'), 'HSTS')
  t.equal(r.headers.get('x-powered-by'), null)
  t.equal(r.headers.get('cache-control'), 'no-store')
  await signUp(api, dataDir, 'headers@example.com', password)
  const login = await api('POST', '/api/auth/login', { body: { email: 'headers@example.com', password } })
  t.equal(login.status, 200)
  t.equal(login.headers.get('cache-control'), 'no-store', 'a token answer is never cached')
  const notFound = await api('GET', '/api/nowhere')
  t.equal(notFound.headers.get('x-content-type-options'), 'nosniff', 'errors too')
})

t.test('logout with a session id and a wrong secret signs nobody out', async t => {
  await signUp(api, dataDir, 'logout@example.com', password)
  const login = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'logout@example.com', password })
  })
  const cookie = /svc_refresh=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]
  const [sessionId] = decodeURIComponent(cookie).split('.')
  const forged = await fetch(`${service.url}/api/auth/logout`, {
    method: 'POST',
    headers: { cookie: `svc_refresh=${encodeURIComponent(`${sessionId}.not-the-secret`)}` }
  })
  t.equal(forged.status, 204, 'the same answer')
  const refresh = await fetch(`${service.url}/api/auth/refresh`, { method: 'POST', headers: { cookie: `svc_refresh=${cookie}` } })
  t.equal(refresh.status, 200, 'the session is still alive: its holder refreshes')
  const rotated = /svc_refresh=([^;]+)/.exec(refresh.headers.get('set-cookie') ?? '')![1]
  const real = await fetch(`${service.url}/api/auth/logout`, { method: 'POST', headers: { cookie: `svc_refresh=${rotated}` } })
  t.equal(real.status, 204)
  const after = await fetch(`${service.url}/api/auth/refresh`, { method: 'POST', headers: { cookie: `svc_refresh=${rotated}` } })
  t.equal(after.status, 401, "the holder's logout ends it")
})

t.test("the tests' TOTP oracle reproduces RFC 6238 Appendix B (SHA-1 rows, from the RFC's table)", async t => {
  // RFC 6238 Appendix B: the 20-byte ASCII secret "12345678901234567890", 8 digits, 30 s steps.
  const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'
  for (const [time, code] of [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130']
  ] as const) {
    t.equal(totp(secret, time * 1000, { digits: 8 }), code, `SHA-1 at ${time}`)
  }
})

t.test('turning two-factor on takes the code alone, is mailed and signs other sessions out; its challenge token is single use', async t => {
  const token = await signUp(api, dataDir, 'challenge@example.com', password)
  const other = (await api('POST', '/api/auth/login', { body: { email: 'challenge@example.com', password } })).body.access_token
  t.equal((await api('GET', '/api/users/me', { token: other })).status, 200, 'another session (positive control)')
  const setup = await api('POST', '/api/users/me/2fa/enable', { token })
  t.equal(
    (await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: await totpNow(setup.body.secret) } })).status,
    204,
    "the TOTP code alone, as the interface's row says"
  )
  t.equal((await api('GET', '/api/users/me', { token: other })).status, 401, 'every other session is signed out')
  t.equal((await api('GET', '/api/users/me', { token })).status, 200, 'this one stays')
  await waitUntil(() => outboxMailsTo(dataDir, 'challenge@example.com').some(m => /two-factor/i.test(m) && /turned on|enabled|activ/i.test(m)))
  t.pass('the account is told by mail that two-factor was turned on')
  const challenge = await api('POST', '/api/auth/login', { body: { email: 'challenge@example.com', password } })
  t.equal(challenge.body.two_factor_required, true)
  const [first, second] = setup.body.backup_codes as string[]
  t.equal((await api('POST', '/api/auth/2fa/verify', { body: { temp_token: challenge.body.temp_token, code: first } })).status, 200, 'completed once')
  const again = await api('POST', '/api/auth/2fa/verify', { body: { temp_token: challenge.body.temp_token, code: second } })
  t.equal(again.status, 401, 'the same challenge with another valid code is refused')
  t.equal(again.body.code, 'verify_2fa.invalid_token')
  const fresh = await api('POST', '/api/auth/login', { body: { email: 'challenge@example.com', password } })
  t.equal(
    (await api('POST', '/api/auth/2fa/verify', { body: { temp_token: fresh.body.temp_token, code: second } })).status,
    200,
    'a new challenge takes the unused backup code'
  )
})
