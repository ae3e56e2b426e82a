import t from 'tap'
import { outboxMailsTo, signUp, build } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { totpNow } from '../support/totp.ts'

// Changes to how an account is reached (ASVS 5.0
// V6.3.7): a password change or reset cancels a pending email change and is told to the
// account; a change of address is told to the old one; the confirmation code is never in a
// subject line. The oracle: the mails in the outbox (DATA_DIR/outbox, one .eml per mail).
const { dataDir, api } = await build(t, { PUBLIC_URL: 'https://app.example.com' })
const password = 'correct horse battery staple'

const decoded = (mail: string): string => mail.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
const linkIn = async (email: string, path: string, count = 1): Promise<string> => {
  await waitUntil(() => outboxMailsTo(dataDir, email).filter(m => decoded(m).includes(path)).length >= count)
  const mail = outboxMailsTo(dataDir, email).filter(m => decoded(m).includes(path))[count - 1]
  return decodeURIComponent(new RegExp(`${path}\\?token=(\\S+)`).exec(decoded(mail))![1])
}
const mailWith = async (email: string, subject: RegExp): Promise<string> => {
  await waitUntil(() => outboxMailsTo(dataDir, email).some(m => subject.test(m)))
  return decoded(outboxMailsTo(dataDir, email).find(m => subject.test(m))!)
}

t.test('a password reset cancels a pending email change (one started by whoever knew the old password), and is told', async t => {
  const token = await signUp(api, dataDir, 'owner@example.com', password)
  const me = (await api('GET', '/api/users/me', { token })).body
  // Someone with the old password asks to move the account to their address.
  t.equal((await api('PATCH', `/api/users/${me.uuid}/email`, { token, body: { new_email: 'thief@example.com', current_password: password } })).status, 204)
  const stolen = await linkIn('thief@example.com', 'verify-email-change')
  // The owner resets the password.
  t.equal((await api('POST', '/api/auth/forgot-password', { body: { email: 'owner@example.com' } })).status, 204)
  const reset = await linkIn('owner@example.com', 'reset-password')
  t.equal((await api('POST', '/api/auth/reset-password', { body: { token: reset, new_password: 'a fresh passphrase, mine again' } })).status, 204)
  const told = await mailWith('owner@example.com', /^Subject: Your password was changed/m)
  t.match(told, /reset/, 'the account is told its password was reset')
  const late = await api('POST', '/api/auth/verify-email-change', { body: { token: stolen } })
  t.equal(late.status, 401, 'the pending change is void')
  t.equal(
    (await api('POST', '/api/auth/login', { body: { email: 'owner@example.com', password: 'a fresh passphrase, mine again' } })).status,
    200,
    'the account keeps its address'
  )
})

t.test('a password change is told to the account; a change of address to the old address', async t => {
  const token = await signUp(api, dataDir, 'mover@example.com', password)
  const me = (await api('GET', '/api/users/me', { token })).body
  t.equal(
    (await api('PATCH', `/api/users/${me.uuid}/password`, { token, body: { current_password: password, new_password: 'a second passphrase' } })).status,
    204
  )
  t.match(await mailWith('mover@example.com', /^Subject: Your password was changed/m), /was changed/)
  t.equal(
    (await api('PATCH', `/api/users/${me.uuid}/email`, { token, body: { new_email: 'moved@example.com', current_password: 'a second passphrase' } })).status,
    204
  )
  t.equal((await api('POST', '/api/auth/verify-email-change', { body: { token: await linkIn('moved@example.com', 'verify-email-change') } })).status, 204)
  const notice = await mailWith('mover@example.com', /^Subject: The address of your account was changed/m)
  t.match(notice, /moved@example\.com/, 'the old address hears where the account went')
})

t.test('the confirmation code is not in the subject line', async t => {
  await api('POST', '/api/auth/register', { body: { email: 'subject@example.com', password, locale: 'fr' } })
  await waitUntil(() => outboxMailsTo(dataDir, 'subject@example.com').length > 0)
  const mail = outboxMailsTo(dataDir, 'subject@example.com')[0]
  const subject = /^Subject: (.*)$/m.exec(mail)![1]
  t.notMatch(subject, /\d{6}/, `subject: ${subject}`)
  t.match(decoded(mail), /\d{6}/, 'the code is in the body')
})

t.test('turning two-factor on is told to the account', async t => {
  const token = await signUp(api, dataDir, 'twofactor@example.com', password)
  const setup = (await api('POST', '/api/users/me/2fa/enable', { token })).body
  const code = await totpNow(setup.secret)
  t.equal((await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code, password } })).status, 204)
  t.ok(await mailWith('twofactor@example.com', /^Subject: Two-factor authentication was turned on/m), 'the account hears of it')
})

t.test('a locked sign-in looks the same for an address with and without an account', async t => {
  await signUp(api, dataDir, 'lockable@example.com', password)
  const statuses = async (email: string): Promise<number[]> => {
    const out: number[] = []
    for (let i = 0; i < 7; i++) out.push((await api('POST', '/api/auth/login', { body: { email, password: `wrong ${i}` } })).status)
    return out
  }
  const known = await statuses('lockable@example.com')
  const unknown = await statuses('never-registered@example.com')
  t.same(known, [401, 401, 401, 401, 401, 429, 429])
  t.same(unknown, known, 'the same answers in the same order')
})
