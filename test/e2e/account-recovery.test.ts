import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { signUp, build } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { banUser } from '../../src/flows/revoke-sessions/ban-user.ts'
import { unbanUser } from '../../src/commands/user/unban-user.ts'
import { accountOfEmail } from '../../src/commands/user/read.ts'

const { dataDir, service, api } = await build(t, { PUBLIC_URL: 'https://app.example.com' })
const password = 'correct horse battery staple'

/** The mails in the outbox to `email`, oldest first. */
const mailsTo = (email: string): string[] => {
  const dir = join(dataDir, 'outbox')
  return readdirSync(dir)
    .filter(f => f.endsWith('.eml'))
    .sort()
    .map(f => readFileSync(join(dir, f), 'utf8'))
    .filter(m => m.includes(`To: ${email}`))
}
const resetToken = async (email: string, count: number): Promise<string> => {
  await waitUntil(() => mailsTo(email).filter(m => m.includes('token=')).length >= count)
  const mail = mailsTo(email).filter(m => m.includes('token='))[count - 1]
  // The body is quoted-printable: undo soft line breaks and =XX escapes.
  const body = mail.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
  const link = /https:\/\/app\.example\.com\/reset-password\?token=(\S+)/.exec(body)![1]
  return decodeURIComponent(link)
}

t.test('resend-confirmation: the same 204 in every case; no new code within the cooldown', async t => {
  t.equal((await api('POST', '/api/auth/resend-confirmation', { body: { email: 'nobody@example.com' } })).status, 204)
  const bad = await api('POST', '/api/auth/resend-confirmation', { body: { email: 'not an address' } })
  t.equal(bad.status, 400)
  t.equal(bad.body.code, 'resend_confirmation.invalid_email')
  await api('POST', '/api/auth/register', { body: { email: 'slow@example.com', password, locale: 'en' } })
  await waitUntil(() => mailsTo('slow@example.com').length === 1)
  t.equal((await api('POST', '/api/auth/resend-confirmation', { body: { email: 'slow@example.com' } })).status, 204)
  // Positive control: registering the address again (a new password) must mail a new code;
  // the work after each answer runs in request order per address, so the resend's is done by then.
  await api('POST', '/api/auth/register', { body: { email: 'slow@example.com', password: `${password} again`, locale: 'en' } })
  await waitUntil(() => mailsTo('slow@example.com').length >= 2)
  t.equal(mailsTo('slow@example.com').length, 2, 'the resend within the cooldown mailed nothing; the new registration did')
})

t.test('forgot and reset password: mailed link, single use, sessions signed out', async t => {
  const token = await signUp(api, dataDir, 'forgetful@example.com', password)
  t.equal((await api('POST', '/api/auth/forgot-password', { body: { email: 'ghost@example.com' } })).status, 204, 'same 204 for an absent account')
  t.equal((await api('POST', '/api/auth/forgot-password', { body: { email: 'bad' } })).status, 400)
  t.equal((await api('POST', '/api/auth/forgot-password', { body: { email: 'forgetful@example.com' } })).status, 204)
  const reset = await resetToken('forgetful@example.com', 1)
  const weak = await api('POST', '/api/auth/reset-password', { body: { token: reset, new_password: 'short' } })
  t.equal(weak.status, 400)
  t.equal(weak.body.code, 'reset_password.invalid_password')
  t.equal((await api('POST', '/api/auth/reset-password', { body: { token: 'garbage', new_password: 'a brand new password' } })).status, 401)
  t.equal(
    (
      await api('POST', '/api/auth/reset-password', {
        body: { token: `01a200f4-4e74-7104-92f0-217355e415da.${reset.split('.')[1]}`, new_password: 'a brand new password' }
      })
    ).status,
    404
  )
  t.equal((await api('POST', '/api/auth/reset-password', { body: { token: reset, new_password: 'a brand new password' } })).status, 204)
  t.equal((await api('POST', '/api/auth/reset-password', { body: { token: reset, new_password: 'yet another password' } })).status, 401, 'single use')
  t.equal((await api('POST', '/api/auth/login', { body: { email: 'forgetful@example.com', password } })).status, 401, 'old password refused')
  t.equal((await api('POST', '/api/auth/login', { body: { email: 'forgetful@example.com', password: 'a brand new password' } })).status, 200)
  await waitUntil(async () => (await api('GET', '/api/users/me', { token })).status === 401)
  t.pass('the sessions from before the reset are signed out')
})

t.test('change password: checks, other sessions revoked, the current one kept', async t => {
  const current = await signUp(api, dataDir, 'changer@example.com', password)
  const other = (await api('POST', '/api/auth/login', { body: { email: 'changer@example.com', password } })).body.access_token
  const me = (await api('GET', '/api/users/me', { token: current })).body
  const stranger = (await api('GET', '/api/users/me', { token: await signUp(api, dataDir, 'stranger@example.com', password) })).body
  const path = `/api/users/${me.uuid}/password`
  const wrong = await api('PATCH', path, { token: current, body: { current_password: 'not it at all', new_password: 'a fresh password' } })
  t.equal(wrong.status, 400)
  t.equal(wrong.body.code, 'change_password.wrong_password')
  t.equal((await api('PATCH', path, { token: current, body: { current_password: password, new_password: 'short' } })).status, 400)
  t.equal(
    (await api('PATCH', `/api/users/${stranger.uuid}/password`, { token: current, body: { current_password: password, new_password: 'a fresh password' } }))
      .status,
    403
  )
  t.equal(
    (
      await api('PATCH', '/api/users/01a200f4-4e74-7104-92f0-217355e415da/password', {
        token: current,
        body: { current_password: password, new_password: 'a fresh password' }
      })
    ).status,
    404
  )
  t.equal((await api('PATCH', path, { body: { current_password: password, new_password: 'a fresh password' } })).status, 401)
  t.equal((await api('PATCH', path, { token: current, body: { current_password: password, new_password: 'a fresh password' } })).status, 204)
  await waitUntil(async () => (await api('GET', '/api/users/me', { token: other })).status === 401)
  t.equal((await api('GET', '/api/users/me', { token: current })).status, 200, 'the session that changed it stays')
  t.equal((await api('POST', '/api/auth/login', { body: { email: 'changer@example.com', password: 'a fresh password' } })).status, 200)
})

t.test('change locale: validated, applied to the profile and to mails', async t => {
  const token = await signUp(api, dataDir, 'polyglot@example.com', password)
  const bad = await api('PATCH', '/api/users/me/locale', { token, body: { locale: 'tlh' } })
  t.equal(bad.status, 400)
  t.equal(bad.body.code, 'change_locale.invalid_locale')
  t.equal((await api('PATCH', '/api/users/me/locale', { token, body: { locale: 'fr' } })).status, 204)
  t.equal((await api('GET', '/api/users/me', { token })).body.locale, 'fr')
  await api('POST', '/api/auth/forgot-password', { body: { email: 'polyglot@example.com' } })
  await waitUntil(() => mailsTo('polyglot@example.com').some(m => m.includes('token=')))
  t.match(
    mailsTo('polyglot@example.com').find(m => m.includes('token=')),
    /=?UTF-8|R=C3=A9initialisez|Réinitialisez/
  )
  t.equal((await api('PATCH', '/api/users/me/locale', { body: { locale: 'fr' } })).status, 401)
})

t.test('a banned account gets no reset link: the same 204, and no mail', async t => {
  await signUp(api, dataDir, 'banned-forgetful@example.com', password)
  const owner = (await accountOfEmail(service.core.ctx, 'banned-forgetful@example.com'))!
  await banUser(service.core.ctx, 'banned-forgetful@example.com', 'abuse', 'test')
  t.equal((await api('POST', '/api/auth/forgot-password', { body: { email: 'banned-forgetful@example.com' } })).status, 204, 'the same 204')
  // Positive control: once unbanned, the next request for the same address (its work runs
  // after the first's) is mailed; the reset it issues must come after the unban.
  await unbanUser(service.core.ctx, 'banned-forgetful@example.com', 'test')
  t.equal((await api('POST', '/api/auth/forgot-password', { body: { email: 'banned-forgetful@example.com' } })).status, 204)
  await resetToken('banned-forgetful@example.com', 1)
  const types = (await service.core.store.readStream(`user-${owner}`)).map(e => e.type).filter(type => /Banned|Unbanned|PasswordResetRequested/.test(type))
  t.same(types, ['UserBanned', 'UserUnbanned', 'PasswordResetRequested'], 'no reset was issued while banned')
  t.equal(mailsTo('banned-forgetful@example.com').filter(m => m.includes('token=')).length, 1, 'one link mailed, after the unban')
})
