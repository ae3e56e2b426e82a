import t from 'tap'
import { totp } from '../support/totp.ts'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'

const dataDir = t.testdir()
// The service's clock runs `skew` ms ahead of the machine's: a test that needs the next TOTP step moves it instead of waiting up to 30 s.
let skew = 0
const service = await startTestService(testConfig(dataDir), { now: () => new Date(Date.now() + skew) })
t.teardown(() => service.close())
const api = client(service.url)
const password = 'correct horse battery staple'
const now = (): number => Math.floor((Date.now() + skew) / 1000)
// Codes from our RFC 6238 oracle (test/support/totp.ts, checked against the RFC's Appendix B), not from the library the service checks them with.
const code = async (secret: string, offsetS = 0, at = now()): Promise<string> => totp(secret, (at + offsetS) * 1000)

// Codes are derived from the moment of setup; the server accepts a code only in its own
// 30 s step (no drift window: ASVS 5.0 V6.5.5), so a test that needs a later code waits for its step.
async function setUp(email: string): Promise<{ token: string; secret: string; backup: string[]; at: number; setupCode: string }> {
  const token = await signUp(api, dataDir, email, password)
  const r = await api('POST', '/api/users/me/2fa/enable', { token })
  if (r.status !== 200) throw new Error(`enable: ${r.status}`)
  const at = now()
  const setupCode = await code(r.body.secret, 0, at)
  const setup = await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: setupCode, password } })
  if (setup.status !== 204) throw new Error(`verify-setup: ${setup.status} ${JSON.stringify(setup.body)}`)
  return { token, secret: r.body.secret, backup: r.body.backup_codes, at, setupCode }
}
const challenge = async (email: string): Promise<string> => {
  const r = await api('POST', '/api/auth/login', { body: { email, password } })
  if (r.body.two_factor_required !== true) throw new Error(`no challenge: ${JSON.stringify(r.body)}`)
  return r.body.temp_token
}

t.test('setup: enable gives a secret, an otpauth URI and backup codes; the first code activates it', async t => {
  const token = await signUp(api, dataDir, 'twofa@example.com', password)
  t.same((await api('GET', '/api/users/me/2fa', { token })).body, { enabled: false })
  t.equal((await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: '123456', password } })).body.code, 'verify_2fa_setup.no_setup')
  const r = await api('POST', '/api/users/me/2fa/enable', { token })
  t.equal(r.status, 200)
  t.match(r.body.otpauth_uri, /^otpauth:\/\/totp\/.*secret=[A-Z2-7]+/)
  t.equal(r.body.backup_codes.length, 10)
  const wrong = await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: '000000', password } })
  t.equal(wrong.status, 400)
  t.equal(wrong.body.code, 'verify_2fa_setup.invalid_code')
  t.equal((await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: await code(r.body.secret), password } })).status, 204)
  t.same((await api('GET', '/api/users/me/2fa', { token })).body, { enabled: true })
  t.equal((await api('POST', '/api/users/me/2fa/enable', { token })).status, 409)
  t.equal((await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: await code(r.body.secret), password } })).status, 409)
  t.equal((await api('POST', '/api/users/me/2fa/enable')).status, 401)
})

t.test('sign-in: a challenge, completed by a TOTP code never accepted twice, or a single-use backup code', async t => {
  const { secret, backup, at, setupCode } = await setUp('signin2fa@example.com')
  const temp = await challenge('signin2fa@example.com')
  // A code is accepted only in its own 30 s step (ASVS 5.0 V6.5.5): wait for the step after the setup's.
  skew += (Math.floor(at / 30) + 1) * 30_000 - (Date.now() + skew) + 50
  const next = await code(secret)
  t.equal((await api('POST', '/api/auth/2fa/verify', { body: { temp_token: 'not.a.token', code: next } })).status, 401)
  const replay = await api('POST', '/api/auth/2fa/verify', { body: { temp_token: temp, code: setupCode } })
  t.equal(replay.status, 401, 'the code of the setup step is spent')
  const ok = await api('POST', '/api/auth/2fa/verify', { body: { temp_token: temp, code: next } })
  t.equal(ok.status, 200)
  t.type(ok.body.access_token, 'string')
  t.match(ok.headers.get('set-cookie'), /svc_refresh=/)
  t.equal(
    (await api('POST', '/api/auth/2fa/verify', { body: { temp_token: await challenge('signin2fa@example.com'), code: next } })).status,
    401,
    'the same code twice'
  )
  const temp2 = await challenge('signin2fa@example.com')
  t.equal((await api('POST', '/api/auth/2fa/verify', { body: { temp_token: temp2, code: backup[0] } })).status, 200, 'backup code')
  t.equal((await api('POST', '/api/auth/2fa/verify', { body: { temp_token: temp2, code: backup[0] } })).status, 401, 'single use')
})

t.test('disable: needs the password and a code', async t => {
  const { token, backup } = await setUp('disable2fa@example.com')
  t.equal(
    (await api('POST', '/api/users/me/2fa/disable', { token, body: { password: 'wrong password!', code: backup[0] } })).body.code,
    'disable_2fa.wrong_password'
  )
  t.equal((await api('POST', '/api/users/me/2fa/disable', { token, body: { password, code: 'nonsense' } })).body.code, 'disable_2fa.invalid_code')
  t.equal((await api('POST', '/api/users/me/2fa/disable', { token, body: { password, code: backup[1] } })).status, 204)
  t.same((await api('GET', '/api/users/me/2fa', { token })).body, { enabled: false })
  t.equal((await api('POST', '/api/users/me/2fa/disable', { token, body: { password, code: backup[2] } })).body.code, 'disable_2fa.not_enabled')
  const login = await api('POST', '/api/auth/login', { body: { email: 'disable2fa@example.com', password } })
  t.type(login.body.access_token, 'string', 'sign-in without a challenge again')
})

t.test('repeated wrong codes lock the second step (429), for sign-in and for disabling', async t => {
  const { token, backup } = await setUp('lock2fa@example.com')
  const temp = await challenge('lock2fa@example.com')
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push((await api('POST', '/api/auth/2fa/verify', { body: { temp_token: temp, code: '000000' } })).status)
  t.same(statuses, [401, 401, 401, 401, 401, 429])
  const disable = await api('POST', '/api/users/me/2fa/disable', { token, body: { password, code: backup[0] } })
  t.equal(disable.status, 429)
  t.equal(disable.body.code, 'disable_2fa.locked')
})
