import t from 'tap'
import { SMTPServer } from 'smtp-server'
import { settled, build } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// This file owns 127.0.31.0/24. A receiving SMTP server stands in for SMTP_URL.
const received: Array<{ to: string; body: string }> = []
const inbox = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  onData(stream, session, cb) {
    let body = ''
    stream.setEncoding('utf8')
    stream.on('data', (c: string) => {
      body += c
    })
    stream.on('end', () => {
      received.push({ to: session.envelope.rcptTo.map(r => r.address).join(','), body })
      cb()
    })
  }
})
await new Promise<void>(resolve => inbox.listen(2525, '127.0.31.1', () => resolve()))
t.teardown(() => new Promise<void>(resolve => inbox.close(() => resolve())))

const { api } = await build(t, { SMTP_URL: 'smtp://127.0.31.1:2525', MAIL_FROM: 'Verify <no-reply@svc.example>' })

t.test("with SMTP_URL the confirmation code goes out over SMTP, in the account's locale", async t => {
  const r = await api('POST', '/api/auth/register', { body: { email: 'marie@example.fr', password: 'un mot de passe long', locale: 'fr' } })
  t.equal(r.status, 204)
  await waitUntil(() => received.some(m => m.to === 'marie@example.fr'))
  const mail = received.find(m => m.to === 'marie@example.fr')!
  t.match(mail.body, /Votre code de confirmation est \d{6}/)
  t.match(mail.body, /^Message-ID: <[0-9a-f-]+@svc\.example>$/im)
  const code = /est (\d{6})/.exec(mail.body)![1]
  const c = await api('POST', '/api/auth/confirm', { body: { email: 'marie@example.fr', code } })
  t.equal(c.status, 200)
  t.type(c.body.access_token, 'string')
  t.equal(c.body.expires_in, 900)
})

t.test('bad input gets a 4xx problem, never a 500', async t => {
  const token = await signUpViaSmtp()
  // The status each must get: 400 for a malformed body or an invalid field value (docs/interface.md §7);
  // 415 for a body in a media type the API does not take (RFC 9110 §15.5.16, declared in the OpenAPI document).
  const probes: Array<[string, string, { raw?: string; body?: unknown; headers?: Record<string, string> }, number]> = [
    ['POST', '/api/verify', { raw: '[1,2,3]' }, 400],
    ['POST', '/api/verify', { raw: 'null' }, 400],
    ['POST', '/api/verify', { raw: '"just a string"' }, 400],
    ['POST', '/api/verify', { body: { email: 42 } }, 400],
    ['POST', '/api/verify', { body: { email: 'a'.repeat(5000) } }, 400],
    ['POST', '/api/verify', { body: { email: 'a@b.com', checks: 'smtp' } }, 400],
    ['POST', '/api/verify', { body: { email: 'a@b.com', checks: [] } }, 400],
    ['POST', '/api/verify', { raw: 'email=a@b.com', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415],
    ['POST', '/api/verify', { raw: 'x', headers: { 'content-type': 'text/plain' } }, 415],
    ['POST', '/api/keys', { body: { name: '', environment: 'live' } }, 400],
    ['POST', '/api/keys', { body: { name: 'x', environment: 'prod' } }, 400],
    ['POST', '/api/keys', { body: { name: 'x', environment: 'live', rate_limit_per_minute: 1000 } }, 400],
    ['POST', '/api/keys', { body: { name: 'x', environment: 'live', scopes: ['root'] } }, 400],
    ['POST', '/api/keys', { body: { name: 'x', environment: 'live', enabled_checks: ['mind_reading'] } }, 400],
    ['GET', '/api/verify/00000000-0000-0000-0000-00000000000g', {}, 400],
    ['GET', '/api/verify/%00', {}, 400],
    ['POST', '/api/agents', { raw: '{"name":' }, 400],
    ['POST', '/api/agents', { body: { name: ['x'], scopes: ['results:read'] } }, 400],
    ['POST', '/api/agents', { body: { name: 'x', scopes: Array.from({ length: 1000 }, () => 'results:read') } }, 400],
    ['GET', '/api/agents?limit=1e3', {}, 400],
    ['GET', '/api/agents?offset=99999999999999999999', {}, 400],
    ['GET', '/api/agents?offset=-0.5', {}, 400],
    ['POST', '/api/webhooks', { body: { url: 42, events: ['job.completed'] } }, 400],
    ['POST', '/api/webhooks', { body: { url: 'https://example.com/h', events: [null] } }, 400],
    ['POST', '/api/webhooks', { body: { url: 'https://[::1/h', events: ['job.completed'] } }, 400],
    ['POST', '/api/webhooks', { body: { url: 'https://exa mple.com/h', events: ['job.completed'] } }, 400],
    ['POST', '/api/webhooks', { body: { url: 'javascript:alert(1)', events: ['job.completed'] } }, 400],
    ['POST', '/api/webhooks', { body: { url: 'https://169.254.169.254/latest', events: ['job.completed'] } }, 400],
    ['PATCH', '/api/webhooks/01a200f4-4e74-7104-92f0-217355e415da', { raw: '[]' }, 400],
    ['PATCH', '/api/webhooks/01a200f4-4e74-7104-92f0-217355e415da', { body: { status: 7 } }, 400],
    ['GET', '/api/webhooks/01a200f4-4e74-7104-92f0-217355e415da/deliveries?limit=abc', {}, 400]
  ]
  for (const [method, path, o, status] of probes) {
    const r = await api(method, path, { token, ...o })
    t.equal(r.status, status, `${method} ${path} ${JSON.stringify(o).slice(0, 80)} → ${status}`)
    t.equal(r.headers.get('content-type')?.split(';')[0], 'application/problem+json')
    t.type(r.body.code, 'string')
  }
  const unknownRoute = await api('GET', '/api/nothing-here')
  t.equal(unknownRoute.status, 404)
  t.equal(unknownRoute.body.code, 'route.not_found')
  const w = await api('GET', '/api/wallet', { token })
  t.equal(w.body.balance, 1000, 'nothing was reserved by rejected requests')
  t.equal((await api('GET', '/api/keys', { token })).body.length, 0, 'no key was created')
  t.equal((await api('GET', '/api/agents', { token })).body.total, 0, 'no agent was created')
  t.equal((await api('GET', '/api/webhooks', { token })).body.length, 0, 'no endpoint was created')
})

t.test('a job for an absurd but short address is accepted and completes invalid_syntax', async t => {
  const token = await signUpViaSmtp('second@example.fr')
  const r = await api('POST', '/api/verify', { token, body: { email: '"\\\u0000"@@@' } })
  t.equal(r.status, 202)
  const job = await settled(api, token, r.body.uuid)
  t.equal(job.status, 'completed')
  t.equal(job.verdict, 'invalid', 'docs/design/verification.md: a syntax failure is invalid')
  t.equal(job.reason, 'invalid_syntax')
})

t.test('health and readiness', async t => {
  t.same((await api('GET', '/healthz')).body, { status: 'ok' })
  t.same((await api('GET', '/readyz')).body, { status: 'ready' })
})

async function signUpViaSmtp(email = 'robust@example.fr'): Promise<string> {
  const r = await api('POST', '/api/auth/register', { body: { email, password: 'a long enough password', locale: 'en' } })
  if (r.status !== 204) throw new Error(String(r.status))
  await waitUntil(() => received.some(m => m.to === email))
  const code = /code is (\d{6})/.exec(received.find(m => m.to === email)!.body)![1]
  return (await api('POST', '/api/auth/confirm', { body: { email, code } })).body.access_token
}
