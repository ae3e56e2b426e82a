import t from 'tap'
import { signUp, build } from '../support/service.ts'

// Every account operation (Auth J) answers 401 without a credential, with a forged or
// expired token, and with an API key or agent token in place of a session token.
const { dataDir, api } = await build(t)
const token = await signUp(api, dataDir, 'auth-sweep@example.com', 'correct horse battery staple')
const key = (await api('POST', '/api/keys', { token, body: { name: 'k', environment: 'test' } })).body.raw_key as string
const me = (await api('GET', '/api/users/me', { token })).body.uuid as string
const agent = (await api('POST', '/api/agents', { token, body: { name: 'a', scopes: ['results:read'] } })).body.token as string

const operations: Array<[string, string, unknown?]> = [
  ['GET', '/api/users/me'],
  ['GET', `/api/users/${me}`],
  ['DELETE', `/api/users/${me}`, { password: 'x' }],
  ['PATCH', `/api/users/${me}/email`, { new_email: 'a@example.com', current_password: 'x' }],
  ['PATCH', `/api/users/${me}/password`, { current_password: 'x', new_password: 'y' }],
  ['PATCH', '/api/users/me/locale', { locale: 'fr' }],
  ['GET', '/api/users/me/2fa'],
  ['POST', '/api/users/me/2fa/enable'],
  ['POST', '/api/users/me/2fa/verify-setup', { code: '123456', password: 'x' }],
  ['POST', '/api/users/me/2fa/disable', { password: 'x', code: '123456' }],
  ['GET', '/api/users/me/sessions'],
  ['DELETE', '/api/users/me/sessions/01a200f4-4e74-7104-92f0-217355e415da'],
  ['GET', '/api/agents'],
  ['POST', '/api/agents', { name: 'a', scopes: ['results:read'] }],
  ['GET', '/api/agents/01a200f4-4e74-7104-92f0-217355e415da'],
  ['DELETE', '/api/agents/01a200f4-4e74-7104-92f0-217355e415da']
]

for (const [method, path, body] of operations) {
  t.test(`${method} ${path}: 401 without a valid session token`, async t => {
    for (const credential of [undefined, 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln', key, agent]) {
      const r = await api(method, path, { token: credential, body })
      t.equal(
        r.status,
        401,
        credential === key
          ? 'an API key is not a session'
          : credential === agent
            ? 'an agent token is not a session'
            : credential
              ? 'forged token'
              : 'no credential'
      )
      t.equal(r.body.code, 'auth.unauthorized')
    }
  })
}

t.test('register: 400 for a malformed address', async t => {
  const r = await api('POST', '/api/auth/register', { body: { email: 'no at sign', password: 'correct horse battery staple', locale: 'en' } })
  t.equal(r.status, 400)
  t.equal(r.body.code, 'register_user.invalid_email')
})

// "A" operations (API key, session token or agent token) answer 401 without a credential,
// with a forged one, or with a revoked key (docs/interface.md §4's rows list their 401).
const revoked = (await api('POST', '/api/keys', { token, body: { name: 'gone', environment: 'test' } })).body
await api('DELETE', `/api/keys/${revoked.uuid}`, { token })
for (const [method, path, body] of [
  ['GET', '/api/keys'],
  ['POST', '/api/keys', { name: 'x', environment: 'test' }],
  ['PATCH', '/api/keys/01a200f4-4e74-7104-92f0-217355e415da', { name: 'y' }],
  ['GET', '/api/wallet/balance-history'],
  ['GET', '/api/wallet'],
  ['GET', '/api/jobs']
] as Array<[string, string, unknown?]>) {
  t.test(`${method} ${path}: 401 without a valid credential`, async t => {
    for (const credential of [undefined, 'svc_not_a_key_at_all', 'sva_not_an_agent_token', revoked.raw_key as string]) {
      const r = await api(method, path, { token: credential, body })
      t.equal(r.status, 401, credential ?? 'no credential')
      t.equal(r.body.code, 'auth.unauthorized')
    }
  })
}
