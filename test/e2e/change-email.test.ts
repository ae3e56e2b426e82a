import t from 'tap'
import { outboxMailsTo, signUp, build } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

const { dataDir, api } = await build(t, { PUBLIC_URL: 'https://app.example.com' })
const password = 'correct horse battery staple'

const linkTo = async (email: string): Promise<string> => {
  await waitUntil(() => outboxMailsTo(dataDir, email).some(m => m.includes('verify-email-change')))
  const mail = outboxMailsTo(dataDir, email)
    .filter(m => m.includes('verify-email-change'))
    .at(-1)!
  const body = mail.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
  return decodeURIComponent(/verify-email-change\?token=(\S+)/.exec(body)![1])
}

t.test('change email: link to the new address, applied on verification; the old address is released', async t => {
  const token = await signUp(api, dataDir, 'before@example.com', password)
  const me = (await api('GET', '/api/users/me', { token })).body
  const other = (await api('GET', '/api/users/me', { token: await signUp(api, dataDir, 'taken@example.com', password) })).body
  t.equal((await api('PATCH', `/api/users/${other.uuid}/email`, { token, body: { new_email: 'x@example.com', current_password: password } })).status, 403)
  const path = `/api/users/${me.uuid}/email`
  t.equal((await api('PATCH', path, { token, body: { new_email: 'not an address', current_password: password } })).body.code, 'change_email.invalid_email')
  t.equal(
    (await api('PATCH', path, { token, body: { new_email: 'after@example.com', current_password: 'wrong password!' } })).body.code,
    'change_email.wrong_password'
  )
  const taken = await api('PATCH', path, { token, body: { new_email: 'taken@example.com', current_password: password } })
  t.equal(taken.status, 409)
  t.equal((await api('PATCH', path, { body: { new_email: 'after@example.com', current_password: password } })).status, 401)
  t.equal(
    (
      await api('PATCH', '/api/users/01a200f4-4e74-7104-92f0-217355e415da/email', {
        token,
        body: { new_email: 'after@example.com', current_password: password }
      })
    ).status,
    404
  )
  t.equal((await api('PATCH', path, { token, body: { new_email: 'after@example.com', current_password: password } })).status, 204)
  const link = await linkTo('after@example.com')
  t.equal((await api('GET', '/api/users/me', { token })).body.email, 'before@example.com', 'unchanged until verified')
  t.equal((await api('POST', '/api/auth/verify-email-change', { body: { token: 'garbage' } })).status, 401)
  t.equal((await api('POST', '/api/auth/verify-email-change', { body: { token: link } })).status, 204)
  t.equal((await api('GET', '/api/users/me', { token })).body.email, 'after@example.com')
  t.equal((await api('POST', '/api/auth/verify-email-change', { body: { token: link } })).status, 401, 'single use')
  t.equal((await api('POST', '/api/auth/login', { body: { email: 'after@example.com', password } })).status, 200)
  t.equal((await api('POST', '/api/auth/login', { body: { email: 'before@example.com', password } })).status, 401)
  t.equal(
    (await api('POST', '/api/auth/register', { body: { email: 'before@example.com', password, locale: 'en' } })).status,
    204,
    'the old address is free again'
  )
})

t.test('verify-email-change: 409 when the address was taken meanwhile', async t => {
  const token = await signUp(api, dataDir, 'racer@example.com', password)
  const me = (await api('GET', '/api/users/me', { token })).body
  t.equal((await api('PATCH', `/api/users/${me.uuid}/email`, { token, body: { new_email: 'contested@example.com', current_password: password } })).status, 204)
  const link = await linkTo('contested@example.com')
  await signUp(api, dataDir, 'contested@example.com', password)
  const r = await api('POST', '/api/auth/verify-email-change', { body: { token: link } })
  t.equal(r.status, 409)
  t.equal(r.body.code, 'verify_email_change.email_taken')
})
