import t from 'tap'
import { join } from 'node:path'
import { mkdirSync } from 'node:fs'
import { startMailWorld } from '../support/mail-world.ts'
import { client, startTestService, testConfig } from '../support/service.ts'

// SSRF through the SMTP probe: a domain whose
// MX points at a loopback address with an SMTP server listening there. Without
// VERIFIER_ALLOW_PRIVATE_TARGETS the verifier never connects — reachable without an
// account through sign-up screening, so tried there and through a job. The oracle: the
// mail world's own count of accepted connections; the positive control: the same probe
// with the flag set does connect. This file owns 127.0.71.0/24.
const world = await startMailWorld({
  dns_ip: '127.0.71.1',
  domains: [{ name: 'internal-target.com', mx: [{ preference: 10, exchange: 'mx.internal-target.com' }] }],
  hosts: [{ name: 'mx.internal-target.com', ip: '127.0.71.2', rcpt: () => ({ code: 250, message: '2.1.5 OK' }) }]
})
t.teardown(() => world.close())
const connections = (): number => world.connections.get('127.0.71.2') ?? 0

// Each part's DATA_DIR under this file's fixture, removed when the whole file is done (a
// subtest's own fixture would be removed while its service still writes the outbox).
const root = t.testdir()
const dirFor = (name: string): string => {
  const d = join(root, name)
  mkdirSync(d, { recursive: true })
  return d
}

t.test('without the flag: sign-up screening (preview and registration) never connects to a private MX', async t => {
  const dataDir = dirFor('without')
  const service = await startTestService(
    testConfig(dataDir, { SIGNUP_SCREENING: 'full', VERIFIER_DNS_SERVERS: world.dns_server, VERIFIER_ALLOW_PRIVATE_TARGETS: 'false' })
  )
  t.teardown(() => service.close())
  const api = client(service.url)
  const preview = await api('POST', '/api/auth/signup-preview', { body: { email: 'admin@internal-target.com' } })
  t.equal(preview.status, 200, 'the preview completed (a positive event: the probe has finished)')
  t.not(preview.body.verdict, 'valid', 'nothing was learned from the internal server')
  t.equal(preview.body.reason, 'no_connect')
  t.equal(connections(), 0, 'the internal SMTP server saw no connection')
  const register = await api('POST', '/api/auth/register', { body: { email: 'admin@internal-target.com', password: 'a decent passphrase', locale: 'en' } })
  t.equal(register.status, 204, 'registration screening completed')
  t.equal(connections(), 0, 'still no connection')
})

t.test('with VERIFIER_ALLOW_PRIVATE_TARGETS=true (tests, on-prem): the same probe connects', async t => {
  const dataDir = dirFor('with')
  const service = await startTestService(
    testConfig(dataDir, { SIGNUP_SCREENING: 'full', VERIFIER_DNS_SERVERS: world.dns_server, VERIFIER_ALLOW_PRIVATE_TARGETS: 'true' })
  )
  t.teardown(() => service.close())
  const r = await client(service.url)('POST', '/api/auth/signup-preview', { body: { email: 'admin@internal-target.com' } })
  t.equal(r.status, 200)
  t.ok(connections() >= 1, `the control connected (${connections()} connections)`)
  t.not(r.body.reason, 'no_connect')
})
