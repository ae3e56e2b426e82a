// ASVS 5.0 level 2 rules of chapters V6 and V7 that the first security pass left open
// (docs/asvs-v6-v7.md), each shown over HTTP or through the operator's command. Oracles:
// the requirement's own statement, codes from the RFC 6238 oracle (test/support/totp.ts).
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { signUp, build } from '../support/service.ts'
import { totp, totpNow as codeNow } from '../support/totp.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

const run = promisify(execFile)
const cli = new URL('../../src/cli.ts', import.meta.url).pathname
const { dataDir, api } = await build(t)
const password = 'correct horse battery staple'

const cookieOf = (headers: Headers): string => /svc_refresh=([^;]*)/.exec(headers.get('set-cookie') ?? '')?.[1] ?? ''
const withCookie = (cookie: string): Record<string, string> => ({ cookie: `svc_refresh=${cookie}` })
async function login(email: string, cookie?: string): Promise<{ token: string; cookie: string }> {
  const r = await api('POST', '/api/auth/login', { body: { email, password }, ...(cookie !== undefined && { headers: withCookie(cookie) }) })
  if (r.status !== 200) throw new Error(`login: ${r.status} ${JSON.stringify(r.body)}`)
  return { token: r.body.access_token, cookie: cookieOf(r.headers) }
}
async function withTwoFactor(email: string): Promise<{ token: string; secret: string; backup: string[] }> {
  const token = await signUp(api, dataDir, email, password)
  const setup = (await api('POST', '/api/users/me/2fa/enable', { token })).body
  const r = await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: await codeNow(setup.secret), password } })
  if (r.status !== 204) throw new Error(`verify-setup: ${r.status}`)
  return { token, secret: setup.secret, backup: setup.backup_codes }
}

t.test('V7.2.4: a sign-in ends the session the browser presented; the new one works', async t => {
  await signUp(api, dataDir, 'replace@example.com', password)
  const first = await login('replace@example.com')
  const open = (await api('GET', '/api/users/me/sessions', { token: first.token })).body.length
  const second = await login('replace@example.com', first.cookie)
  t.not(second.cookie, first.cookie)
  t.equal((await api('POST', '/api/auth/refresh', { headers: withCookie(first.cookie) })).status, 401, "the replaced session's refresh token is void")
  t.equal((await api('GET', '/api/users/me', { token: first.token })).status, 401, 'and its access token ends at once')
  t.equal((await api('GET', '/api/users/me', { token: second.token })).status, 200, 'the new session works')
  t.equal((await api('GET', '/api/users/me/sessions', { token: second.token })).body.length, open, "the new session took the replaced one's place")
  // A cookie whose session id is right but whose secret is not ends nothing (the id alone is no credential).
  const third = await login('replace@example.com', `${second.cookie.split('.')[0]}.${'A'.repeat(43)}`)
  t.equal((await api('GET', '/api/users/me', { token: second.token })).status, 200, 'a forged cookie ended nothing')
  t.equal((await api('GET', '/api/users/me/sessions', { token: third.token })).body.length, open + 1)
})

t.test("V7.4.3: turning two-factor on or off ends the account's other sessions, not the current one", async t => {
  const token = await signUp(api, dataDir, 'factors@example.com', password)
  const other = await login('factors@example.com')
  const setup = (await api('POST', '/api/users/me/2fa/enable', { token })).body
  t.equal((await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: await codeNow(setup.secret), password } })).status, 204)
  t.equal((await api('GET', '/api/users/me', { token: other.token })).status, 401, 'the other session ended when two-factor went on')
  t.equal((await api('GET', '/api/users/me', { token })).status, 200, 'the session that turned it on goes on')
  // Another session (signed in with the second factor), then two-factor off.
  const challenge = (await api('POST', '/api/auth/login', { body: { email: 'factors@example.com', password } })).body.temp_token
  const again = await api('POST', '/api/auth/2fa/verify', { body: { temp_token: challenge, code: setup.backup_codes[0] } })
  t.equal(again.status, 200)
  t.equal((await api('POST', '/api/users/me/2fa/disable', { token, body: { password, code: setup.backup_codes[1] } })).status, 204)
  t.equal((await api('GET', '/api/users/me', { token: again.body.access_token })).status, 401, 'the other session ended when two-factor went off')
  t.equal((await api('GET', '/api/users/me', { token })).status, 200)
})

t.test('V7.5.1: with two-factor on, changing the password or the address needs a second factor too', async t => {
  const { token, backup } = await withTwoFactor('both@example.com')
  const me = (await api('GET', '/api/users/me', { token })).body.uuid
  const none = await api('PATCH', `/api/users/${me}/password`, { token, body: { current_password: password, new_password: 'another long passphrase' } })
  t.equal(none.status, 400)
  t.equal(none.body.code, 'change_password.second_factor_required')
  const wrong = await api('PATCH', `/api/users/${me}/password`, {
    token,
    body: { current_password: password, new_password: 'another long passphrase', code: '0000-0000-0000-0000-0000-0000-0000' }
  })
  t.equal(wrong.status, 400)
  t.equal(wrong.body.code, 'change_password.invalid_code')
  const noCodeEmail = await api('PATCH', `/api/users/${me}/email`, { token, body: { new_email: 'both-new@example.com', current_password: password } })
  t.equal(noCodeEmail.body.code, 'change_email.second_factor_required')
  t.equal(
    (await api('PATCH', `/api/users/${me}/email`, { token, body: { new_email: 'both-new@example.com', current_password: password, code: backup[0] } })).status,
    204,
    'with a backup code'
  )
  t.equal(
    (await api('PATCH', `/api/users/${me}/password`, { token, body: { current_password: password, new_password: 'another long passphrase', code: backup[1] } }))
      .status,
    204
  )
  t.equal(
    (
      await api('PATCH', `/api/users/${me}/password`, {
        token,
        body: { current_password: 'another long passphrase', new_password: 'and yet another one', code: backup[1] }
      })
    ).body.code,
    'change_password.invalid_code',
    'a backup code works once'
  )
})

t.test('V6.5.5: a TOTP code is accepted only in its own 30 s step', async t => {
  const token = await signUp(api, dataDir, 'steps@example.com', password)
  const setup = (await api('POST', '/api/users/me/2fa/enable', { token })).body
  await codeNow(setup.secret)
  const now = Date.now()
  for (const [offset, what] of [
    [-30_000, 'the previous step'],
    [30_000, 'the next step']
  ] as const) {
    const r = await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: totp(setup.secret, now + offset), password } })
    t.equal(r.body.code, 'verify_2fa_setup.invalid_code', `a code of ${what} is refused`)
  }
  t.equal(
    (await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: await codeNow(setup.secret), password } })).status,
    204,
    "the current step's code works"
  )
})

t.test('V6.5.2: backup codes carry 112 random bits', async t => {
  const token = await signUp(api, dataDir, 'lookup@example.com', password)
  const codes = (await api('POST', '/api/users/me/2fa/enable', { token })).body.backup_codes as string[]
  t.equal(codes.length, 10)
  for (const c of codes) t.match(c, /^[0-9a-f]{4}(-[0-9a-f]{4}){6}$/, '28 hex digits: 112 bits')
  t.equal(new Set(codes).size, 10)
})

t.test("V6.2.11: no password may contain the service's name or a part of the account's address", async t => {
  for (const [email, pw, why] of [
    ['marguerite.duras@lamaison.fr', 'Marguerite forever and ever', 'the local part'],
    ['marguerite.duras@lamaison.fr', 'my lamaison password', 'the domain'],
    ['someone@example.org', 'Email-Verification 2026!', "the service's name"]
  ] as const) {
    const r = await api('POST', '/api/auth/register', { body: { email, password: pw, locale: 'fr' } })
    t.equal(r.status, 400, why)
    t.equal(r.body.code, 'register_user.context_password')
  }
  const token = await signUp(api, dataDir, 'colette@example.org', password)
  const me = (await api('GET', '/api/users/me', { token })).body.uuid
  const change = await api('PATCH', `/api/users/${me}/password`, { token, body: { current_password: password, new_password: 'colette, once more' } })
  t.equal(change.body.code, 'change_password.context_password', 'on a change too')
})

t.test('V6.1.1: a completed password reset lifts the sign-in lock (a lock by strangers cannot keep the owner out)', async t => {
  await signUp(api, dataDir, 'lockedout@example.com', password)
  for (let i = 0; i < 5; i++) await api('POST', '/api/auth/login', { body: { email: 'lockedout@example.com', password: `a stranger's guess ${i}` } })
  t.equal((await api('POST', '/api/auth/login', { body: { email: 'lockedout@example.com', password } })).status, 429, 'locked')
  t.equal((await api('POST', '/api/auth/forgot-password', { body: { email: 'lockedout@example.com' } })).status, 204)
  const { outboxMailsTo } = await import('../support/service.ts')
  await waitUntil(() => outboxMailsTo(dataDir, 'lockedout@example.com').some(m => m.includes('reset-password')))
  const mail = outboxMailsTo(dataDir, 'lockedout@example.com')
    .find(m => m.includes('reset-password'))!
    .replace(/=\r?\n/g, '')
    .replace(/=3D/g, '=')
  const reset = decodeURIComponent(/reset-password\?token=(\S+)/.exec(mail)![1])
  t.equal((await api('POST', '/api/auth/reset-password', { body: { token: reset, new_password: 'a brand new passphrase' } })).status, 204)
  t.equal(
    (await api('POST', '/api/auth/login', { body: { email: 'lockedout@example.com', password: 'a brand new passphrase' } })).status,
    200,
    'the owner signs in at once'
  )
})

t.test("V7.4.5: the operator ends one account's sessions, or everyone's, without a ban", async t => {
  const env = { ...process.env, DATA_DIR: dataDir }
  const a = await signUp(api, dataDir, 'ops-a@example.com', password)
  const b = await signUp(api, dataDir, 'ops-b@example.com', password)
  const one = await run(process.execPath, [cli, 'sessions', 'end', '--email', 'ops-a@example.com'], { env })
  t.match(JSON.parse(one.stdout), { sessions_ended: 1 })
  // The CLI appends from another process: the service reads it when it next polls the store.
  const status = async (token: string): Promise<number> => (await api('GET', '/api/users/me', { token })).status
  await waitUntil(async () => (await status(a)) === 401)
  t.pass("that account's session ended")
  t.equal((await api('GET', '/api/users/me', { token: b })).status, 200, "another account's did not")
  t.equal((await login('ops-a@example.com')).token.length > 0, true, 'no ban: the account signs in again')
  const all = await run(process.execPath, [cli, 'sessions', 'end', '--all'], { env })
  t.ok(JSON.parse(all.stdout).sessions_ended >= 2)
  await waitUntil(async () => (await status(b)) === 401)
  t.pass('every session ended')
  await t.rejects(run(process.execPath, [cli, 'sessions', 'end'], { env }), 'neither --email nor --all: a non-zero exit')
})
