import t from 'tap'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { npmStartNodeFlags, startSvc, svcEnv } from '../support/processes.ts'

// Sessions and tokens (interface "Authentication and sign-in", "Account"): refresh
// rotation with reuse detection and its grace, logout, the session list and revocation.
// The commands' clock is the test's: it moves past the reuse grace instead of waiting.
const dataDir = t.testdir()
/** REFRESH_TOKEN_REUSE_GRACE_S's default (s). */
const GRACE_S = 10
let ahead = 0
const service = await startTestService(testConfig(dataDir), { now: () => new Date(Date.now() + ahead) })
t.teardown(() => service.close())
const api = client(service.url)
const password = 'correct horse battery staple'
const token = await signUp(api, dataDir, 'sessions@example.com', password)

const cookieOf = (headers: Headers): string | null => /svc_refresh=([^;]*)/.exec(headers.get('set-cookie') ?? '')?.[1] ?? null
const login = async (): Promise<{ token: string; cookie: string }> => {
  const r = await api('POST', '/api/auth/login', { body: { email: 'sessions@example.com', password } })
  return { token: r.body.access_token, cookie: cookieOf(r.headers)! }
}
const withCookie = (cookie: string): Record<string, string> => ({ cookie: `svc_refresh=${cookie}` })

t.test('refresh without a cookie answers 200 with a null body', async t => {
  const r = await api('POST', '/api/auth/refresh')
  t.equal(r.status, 200)
  t.equal(r.body, null)
})

t.test('the refresh cookie is HttpOnly, SameSite, scoped to /api/auth; not Secure on plain local HTTP', async t => {
  const r = await api('POST', '/api/auth/login', { body: { email: 'sessions@example.com', password } })
  const set = r.headers.get('set-cookie') ?? ''
  t.match(set, /HttpOnly/)
  t.match(set, /SameSite=Strict/)
  t.match(set, /Path=\/api\/auth/)
  t.notMatch(set, /Secure/)
})

t.test('refresh rotates the token; a spent token presented again after the grace revokes the whole session', async t => {
  const s = await login()
  const r1 = await api('POST', '/api/auth/refresh', { headers: withCookie(s.cookie) })
  t.equal(r1.status, 200)
  t.type(r1.body.access_token, 'string')
  const rotated = cookieOf(r1.headers)!
  t.not(rotated, s.cookie, 'a new refresh token')
  t.equal((await api('GET', '/api/users/me', { token: r1.body.access_token })).status, 200)
  ahead += (GRACE_S + 1) * 1000
  const reuse = await api('POST', '/api/auth/refresh', { headers: withCookie(s.cookie) })
  t.equal(reuse.status, 401, `${GRACE_S + 1} s later, the spent token is a reuse`)
  t.equal(reuse.body.code, 'refresh.invalid_token')
  t.match(reuse.headers.get('set-cookie'), /svc_refresh=;/, 'the cookie is cleared')
  const after = await api('POST', '/api/auth/refresh', { headers: withCookie(rotated) })
  t.equal(after.status, 401, 'the rotated token died with the session')
  t.equal((await api('GET', '/api/users/me', { token: r1.body.access_token })).status, 401, 'and so did its access')
})

t.test('two tabs refresh with one cookie at once: both signed in, the session stays; the first child used retires the other', async t => {
  const uuidOf = (cookie: string): string => cookie.split('.')[0]
  const listed = async (access: string, cookie: string): Promise<boolean> =>
    ((await api('GET', '/api/users/me/sessions', { token: access })).body as Array<{ uuid: string }>).some(x => x.uuid === uuidOf(cookie))
  for (const keep of [0, 1]) {
    const s = await login()
    // Sent together, as two tabs opening do: neither waits for the other's answer.
    const tabs = await Promise.all([0, 1].map(async () => await api('POST', '/api/auth/refresh', { headers: withCookie(s.cookie) })))
    t.same(
      tabs.map(r => r.status),
      [200, 200],
      'both tabs get 200'
    )
    const cookies = tabs.map(r => cookieOf(r.headers)!)
    t.ok(cookies.every(c => c !== '' && c !== s.cookie) && cookies[0] !== cookies[1], 'each a refresh token of its own, both new')
    for (const r of tabs) t.equal((await api('GET', '/api/users/me', { token: r.body.access_token })).status, 200, "each tab's access token works")
    t.ok(await listed(tabs[0].body.access_token, s.cookie), 'the session is still there')
    // Whichever child the browser keeps refreshes (the other tab's answer may have come last).
    const next = await api('POST', '/api/auth/refresh', { headers: withCookie(cookies[keep]) })
    t.equal(next.status, 200, `tab ${keep + 1}'s token refreshes the session`)
    const other = await api('POST', '/api/auth/refresh', { headers: withCookie(cookies[1 - keep]) })
    t.equal(other.status, 401, "the other tab's token was retired by that rotation: presented again, a reuse…")
    t.equal((await api('POST', '/api/auth/refresh', { headers: withCookie(cookieOf(next.headers)!) })).status, 401, '…which ends the session')
  }
})

t.test('as `npm start` runs it (its heap flags, its own process): five rounds of two tabs opening at once, all signed in', async t => {
  const dir = t.testdir()
  const svc = await startSvc(t, ['serve'], svcEnv(dir, { LOG_LEVEL: 'info' }), npmStartNodeFlags())
  const remote = client(svc.url)
  await signUp(remote, dir, 'tabs@example.com', password)
  const signedIn = await remote('POST', '/api/auth/login', { body: { email: 'tabs@example.com', password } })
  let cookie = cookieOf(signedIn.headers)!
  for (let round = 1; round <= 5; round++) {
    const tabs = await Promise.all([0, 1].map(async () => await remote('POST', '/api/auth/refresh', { headers: withCookie(cookie) })))
    t.same(
      tabs.map(r => r.status),
      [200, 200],
      `round ${round}: both tabs signed in`
    )
    cookie = cookieOf(tabs[round % 2].headers)!
  }
  const me = await remote('POST', '/api/auth/refresh', { headers: withCookie(cookie) })
  t.equal(me.status, 200, 'the session lives on')
  t.equal((await remote('GET', '/api/users/me', { token: me.body.access_token })).status, 200)
})

t.test('malformed and unknown refresh tokens are 401', async t => {
  t.equal((await api('POST', '/api/auth/refresh', { headers: withCookie('garbage') })).status, 401)
  t.equal((await api('POST', '/api/auth/refresh', { headers: withCookie('01a200f4-4e74-7104-92f0-217355e415da.AAAAAAAAAAAAAAAAAAAAAAAAAAAA') })).status, 401)
})

t.test('logout is idempotent, clears the cookie and ends the session', async t => {
  const s = await login()
  const out = await api('POST', '/api/auth/logout', { headers: withCookie(s.cookie) })
  t.equal(out.status, 204)
  t.match(out.headers.get('set-cookie'), /svc_refresh=;/)
  t.equal((await api('POST', '/api/auth/logout', { headers: withCookie(s.cookie) })).status, 204, 'again')
  t.equal((await api('POST', '/api/auth/logout')).status, 204, 'without a cookie')
  t.equal((await api('POST', '/api/auth/refresh', { headers: withCookie(s.cookie) })).status, 401)
  t.equal((await api('GET', '/api/users/me', { token: s.token })).status, 401)
})

t.test('sessions: listed newest first; revoking one ends its refresh token and its access', async t => {
  const a = await login()
  const b = await login()
  const list = await api('GET', '/api/users/me/sessions', { token: b.token })
  t.equal(list.status, 200)
  const starts = list.body.map((s: any) => s.started_at)
  t.same(starts, [...starts].sort().reverse(), 'newest first')
  t.ok(list.body[0].current)
  t.notOk(JSON.stringify(list.body).includes('refresh'), 'no refresh material')
  const aUuid = a.cookie.split('.')[0]
  t.equal((await api('DELETE', `/api/users/me/sessions/${aUuid}`, { token: b.token })).status, 204)
  t.equal((await api('POST', '/api/auth/refresh', { headers: withCookie(a.cookie) })).status, 401)
  t.equal((await api('GET', '/api/users/me', { token: a.token })).status, 401)
  t.notOk((await api('GET', '/api/users/me/sessions', { token: b.token })).body.some((s: any) => s.uuid === aUuid))
})

t.test('session revocation errors: 400 malformed, 404 unknown, 403 someone else’s, 401 no token', async t => {
  const mine = await login()
  const other = await signUp(api, dataDir, 'other-sessions@example.com', password)
  const otherSessions = (await api('GET', '/api/users/me/sessions', { token: other })).body
  t.equal((await api('DELETE', '/api/users/me/sessions/nope', { token: mine.token })).status, 400)
  t.equal((await api('DELETE', '/api/users/me/sessions/01a200f4-4e74-7104-92f0-217355e415da', { token: mine.token })).status, 404)
  const foreign = await api('DELETE', `/api/users/me/sessions/${otherSessions[0].uuid}`, { token: mine.token })
  t.equal(foreign.status, 403)
  t.equal((await api('DELETE', `/api/users/me/sessions/${otherSessions[0].uuid}`)).status, 401)
})

t.test('profile: me, my uuid, someone else’s (403), unknown (404), malformed (400)', async t => {
  const me = await api('GET', '/api/users/me', { token })
  t.equal(me.status, 200)
  t.match(me.body, { email: 'sessions@example.com', locale: 'en', status: 'confirmed', two_factor_enabled: false })
  t.equal((await api('GET', `/api/users/${me.body.uuid}`, { token })).status, 200)
  const other = await api('GET', '/api/users/me', { token: await signUp(api, dataDir, 'third@example.com', password) })
  t.equal((await api('GET', `/api/users/${other.body.uuid}`, { token })).status, 403)
  t.equal((await api('GET', '/api/users/01a200f4-4e74-7104-92f0-217355e415da', { token })).status, 404)
  t.equal((await api('GET', '/api/users/x', { token })).status, 400)
  t.equal((await api('GET', '/api/users/me')).status, 401)
})
