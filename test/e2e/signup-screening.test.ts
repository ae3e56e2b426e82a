import t from 'tap'
import { startMailWorld } from '../support/mail-world.ts'
import { build } from '../support/service.ts'

// Sign-up screening with the verification engine against a loopback mail world.
// This file owns 127.0.60.0/24.
const world = await startMailWorld({
  dns_ip: '127.0.60.1',
  domains: [
    { name: 'good-corp.com', mx: [{ preference: 10, exchange: 'mx.good-corp.com' }] },
    { name: 'nullmx-corp.com', mx: 'null_mx' }
  ],
  hosts: [
    {
      name: 'mx.good-corp.com',
      ip: '127.0.60.2',
      rcpt: a => (a.startsWith('real@') ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' })
    }
  ]
})
t.teardown(() => world.close())
const { api } = await build(t, { SIGNUP_SCREENING: 'full', VERIFIER_DNS_SERVERS: world.dns_server })
const password = 'correct horse battery staple'

t.test('register: disposable and undeliverable addresses are refused with their codes', async t => {
  const cases: Array<[string, number, string | null]> = [
    ['real@good-corp.com', 204, null],
    ['someone@mailinator.com', 400, 'register_user.disposable_email'],
    ['ghost@good-corp.com', 400, 'register_user.undeliverable_email'],
    ['a@nullmx-corp.com', 400, 'register_user.undeliverable_email'],
    ['a@no-such-domain-at-all.com', 400, 'register_user.undeliverable_email']
  ]
  for (const [email, status, code] of cases) {
    const r = await api('POST', '/api/auth/register', { body: { email, password, locale: 'en' } })
    t.equal(r.status, status, email)
    if (code) t.equal(r.body.code, code, email)
  }
})

t.test('signup-preview: which checks passed and whether the address may sign up', async t => {
  const ok = await api('POST', '/api/auth/signup-preview', { body: { email: 'real@good-corp.com' } })
  t.equal(ok.status, 200)
  t.match(ok.body, { may_sign_up: true, verdict: 'valid', reason: 'accepted_email' })
  t.ok(ok.body.checks.some((c: any) => c.name === 'smtp' && c.outcome === 'pass'))
  const no = await api('POST', '/api/auth/signup-preview', { body: { email: 'ghost@good-corp.com' } })
  t.match(no.body, { may_sign_up: false, refusal: 'undeliverable_email', reason: 'mailbox_not_found' })
  const typo = await api('POST', '/api/auth/signup-preview', { body: { email: 'real@gmial.com' } })
  t.equal(typo.body.did_you_mean, 'real@gmail.com')
  const bad = await api('POST', '/api/auth/signup-preview', { body: { email: 'not an address' } })
  t.equal(bad.status, 400)
  t.equal(bad.body.code, 'signup_preview.invalid_email')
})

t.test('signup-preview: 429 past the per-client allowance', async t => {
  let status = 200
  for (let i = 0; i < 40 && status === 200; i++) status = (await api('POST', '/api/auth/signup-preview', { body: { email: `real@good-corp.com` } })).status
  t.equal(status, 429)
})
