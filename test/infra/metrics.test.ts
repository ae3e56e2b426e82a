import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pino } from 'pino'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { startRole } from '../../src/main.ts'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { join } from 'node:path'

// `GET /metrics`: after verifying addresses
// in the mail world, the counters moved by what the world saw. This file owns 127.0.61.0/24.
const world = await startMailWorld({
  dns_ip: '127.0.61.1',
  domains: [
    { name: 'metrics-corp.com', mx: [{ preference: 10, exchange: 'aspmx.l.google.com' }] },
    { name: 'grey-metrics.com', mx: [{ preference: 10, exchange: 'mx.grey-metrics.com' }] }
  ],
  hosts: [
    {
      name: 'aspmx.l.google.com',
      ip: '127.0.61.2',
      rcpt: a => (a.startsWith('jane@') ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 No such user' })
    },
    { name: 'mx.grey-metrics.com', ip: '127.0.61.3', greylist_ms: 3_600_000 }
  ]
})
t.teardown(() => world.close())

const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.end('ok'))
})
await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => {
  receiver.close()
})

const TOKEN = 'metrics-secret-0123456789'
const dataDir = t.testdir()
const env = {
  VERIFIER_DNS_SERVERS: world.dns_server,
  VERIFIER_GREYLIST_RETRY_S: '30',
  VERIFIER_GREYLIST_DEADLINE_S: '600',
  METRICS_TOKEN: TOKEN,
  METRICS_PORT: '0',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  VERIFIER_RESULT_CACHE_TTL_S: '0'
}
const service = await startTestService(testConfig(dataDir, env))
t.teardown(() => service.close())
const api = client(service.url)

/** The samples of a Prometheus text exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}
const scrape = async (): Promise<Map<string, number>> => {
  const r = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  return samples(await r.text())
}
const value = (m: Map<string, number>, name: string, labels: Record<string, string>): number => {
  for (const [key, v] of m) {
    if (!key.startsWith(`${name}{`)) continue
    if (Object.entries(labels).every(([k, val]) => key.includes(`${k}="${val}"`))) return v
  }
  return 0
}

t.test('not public: 401 without the bearer token or with another; a port of its own needs none', async t => {
  t.equal((await fetch(`${service.url}/metrics`)).status, 401)
  t.equal((await fetch(`${service.url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } })).status, 401)
  const ok = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(ok.status, 200)
  t.match(ok.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  t.ok(service.metrics_url, 'METRICS_PORT serves too')
  const own = await fetch(`${service.metrics_url}/metrics`)
  t.equal(own.status, 200)
  t.match(await own.text(), /process_cpu_user_seconds_total\{role="serve"\}/)
})

t.test('after verifying addresses the counters moved', async t => {
  const before = await scrape()
  const token = await signUp(api, dataDir, 'metrics@example.com')
  const key = (await api('POST', '/api/keys', { token, body: { name: 'm', environment: 'live' } })).body.raw_key
  const testKey = (await api('POST', '/api/keys', { token, body: { name: 't', environment: 'test' } })).body.raw_key
  const hook = await api('POST', '/api/webhooks', {
    token,
    body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['job.completed'] }
  })
  t.equal(hook.status, 201)
  const valid = await api('POST', '/api/verify', { token: key, body: { email: 'jane@metrics-corp.com' } })
  const invalid = await api('POST', '/api/verify', { token: key, body: { email: 'nobody@metrics-corp.com' } })
  const grey = await api('POST', '/api/verify', { token: key, body: { email: 'jane@grey-metrics.com' } })
  // A test key's job is simulated (the sandbox): counted apart from live results.
  const sandboxed = await api('POST', '/api/verify', { token: testKey, body: { email: 'valid@example.com' } })
  const status = async (uuid: string): Promise<string> => (await api('GET', `/api/verify/${uuid}`, { token: key })).body.status
  await waitUntil(
    async () =>
      (await status(valid.body.uuid)) === 'completed' &&
      (await status(invalid.body.uuid)) === 'completed' &&
      (await status(grey.body.uuid)) === 'deferred' &&
      (await api('GET', `/api/verify/${sandboxed.body.uuid}`, { token: testKey })).body.status === 'completed',
    20_000
  )
  let after = await scrape()
  await waitUntil(async () => {
    after = await scrape()
    return value(after, 'webhook_attempts_total', { outcome: 'delivered' }) - value(before, 'webhook_attempts_total', { outcome: 'delivered' }) >= 2
  }, 20_000)
  const moved = (name: string, labels: Record<string, string>): number => value(after, name, labels) - value(before, name, labels)
  t.equal(moved('verification_jobs_total', { verdict: 'valid', reason: 'accepted_email', environment: 'live' }), 1, 'jobs by verdict, reason and environment')
  t.equal(moved('verification_jobs_total', { verdict: 'invalid', reason: 'mailbox_not_found', environment: 'live' }), 1)
  t.equal(
    moved('verification_jobs_total', { verdict: 'valid', reason: 'accepted_email', environment: 'test' }),
    1,
    "the sandbox's result is counted as test, not live"
  )
  t.equal(moved('verification_job_deferrals_total', { reason: 'greylisted' }), 1, 'a greylisted job was deferred')
  t.ok(moved('smtp_sessions_total', { provider: 'google' }) >= 1, "SMTP sessions by provider (an MX named like Google's)")
  t.ok(moved('smtp_rcpt_total', { provider: 'google' }) >= 2, 'RCPTs by provider')
  t.ok(moved('smtp_sessions_total', { provider: 'other' }) >= 1)
  t.equal(
    moved('webhook_attempts_total', { outcome: 'delivered' }),
    2,
    "webhook attempts by outcome: one per completed live job (the session's endpoint is live: a sandbox job is told to sandbox endpoints only)"
  )
  t.ok(
    moved('http_request_duration_seconds_count', { method: 'POST', route: '/api/verify', status: '202' }) >= 3,
    'request duration by route pattern and status'
  )
  t.ok(value(after, 'http_request_duration_seconds_count', { route: '/api/verify/:uuid', status: '200' }) >= 1, 'the route pattern, never the raw URL')
  t.ok(after.has('lag_events{consumer="projections",role="serve"}') || value(after, 'lag_events', { consumer: 'projections' }) >= 0, 'projection lag in events')
  t.ok(
    [...after.keys()].some(k => k.startsWith('lag_events{consumer="relay"')),
    'relay lag in events'
  )
})

t.test('every role answers /metrics: a relay with its lag', async t => {
  const role = await startRole('relay', testConfig(t.testdir(), { METRICS_TOKEN: TOKEN }), { logger: pino({ level: 'silent' }) })
  t.teardown(() => role.close())
  const r = await fetch(`${role.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(r.status, 200)
  const m = samples(await r.text())
  t.ok(
    [...m.keys()].some(k => k.startsWith('lag_events{consumer="relay",role="relay"}')),
    'its relay lag'
  )
  t.equal((await fetch(`${role.url}/metrics`)).status, 401)
})

t.test("a flow's reaction nobody has run yet: counted per flow, with its age", async t => {
  // The API role alone: no relay, no flow worker. A UserConfirmed appended to its store is a
  // reaction begun (confirm-account's trigger) that nobody is handed: the oracle is that
  // append, made here with the store's own client.
  const dir = t.testdir()
  const role = await startRole('api', testConfig(dir, { METRICS_TOKEN: TOKEN }), { logger: pino({ level: 'silent' }) })
  t.teardown(() => role.close())
  const store = new SqliteEventStore(join(dir, 'events.db'), { poll_interval_ms: 0 })
  t.teardown(() => store.close())
  const at = new Date(Date.now() - 90_000).toISOString()
  await store.append(
    'user-flow-metrics',
    [{ id: 'e-flow-metrics', type: 'UserConfirmed', data: { user_uuid: 'flow-metrics', confirmed_at: at }, metadata: { occurred_at: at } }],
    { expected_revision: 'any' }
  )
  const m = samples(await (await fetch(`${role.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text())
  t.equal(value(m, 'flow_reactions_pending', { flow: 'confirm-account' }), 1, 'one confirm-account reaction pending')
  t.ok(value(m, 'flow_reaction_oldest_seconds', { flow: 'confirm-account' }) >= 90, 'as old as its trigger (90 s)')
  t.equal(value(m, 'flow_reactions_pending', { flow: 'revoke-sessions' }), 0, 'no other flow counts it')
})
