import t from 'tap'
import { startDnsRelay } from '../support/dns-relay.ts'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { unlimitedRates } from '../support/plans.ts'
import { fill, launchChromium, openConsole, press, textOf, waitForText } from '../support/console.ts'

// With the resolver dead: the egress self-test says so on
// /readyz within a self-test period, new live jobs are held (`deferred`) rather than burned
// as `unknown`, and they complete, with the world's answer, once the resolver answers
// again. The resolver the service knows is a UDP relay in front of the world's DNS that
// this test silences and revives; the oracles are the world's records and the API.

const world = await startMailWorld({
  dns_ip: '127.0.81.1',
  domains: [{ name: 'held-corp.com', mx: [{ preference: 10, exchange: 'mx.held-corp.com' }] }],
  hosts: [
    {
      name: 'mx.held-corp.com',
      ip: '127.0.81.10',
      rcpt: a => (a === 'jane@held-corp.com' ? { code: 250, message: 'OK' } : { code: 550, message: '5.1.1 no such user' })
    }
  ]
})
t.teardown(() => world.close())

/** The world's resolver behind a relay the test can silence (a dead resolver). */
const dns = await startDnsRelay(t, world.dns_server, '127.0.81.2')

const dataDir = t.testdir()
const service = await startTestService(
  testConfig(dataDir, {
    VERIFIER_DNS_SERVERS: dns.server,
    VERIFIER_DNS_TIMEOUT_MS: '200',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0.5',
    VERIFIER_EGRESS_TEST_MX: 'mx.held-corp.com',
    // The engine's own result cache would answer a repeated address without DNS: none here.
    VERIFIER_RESULT_CACHE_TTL_S: '0',
    // The test polls its jobs as fast as it can while they are held: a plan's rate limit
    // would answer 429 to the polls, not the jobs' status.
    ...unlimitedRates(dataDir)
  })
)
t.teardown(() => service.close())
const api = client(service.url)

t.test('the resolver dies: /readyz degraded (dns_failing), new live jobs held, then completed once it answers', async t => {
  await waitUntil(async () => (await api('GET', '/readyz')).status === 200, 20_000)
  const token = await signUp(api, dataDir, 'held@example.com')
  const key = (await api('POST', '/api/keys', { token, body: { name: 'live', environment: 'live' } })).body.raw_key as string
  // A positive control while all is well: a live job completes with the world's answer.
  const before = await api('POST', '/api/verify', { token: key, body: { email: 'jane@held-corp.com' } })
  await waitUntil(async () => (await api('GET', `/api/verify/${before.body.uuid}`, { token: key })).body.status === 'completed', 20_000)

  dns.alive = false
  let readyz: { status: number; body: any } = { status: 0, body: null }
  await waitUntil(async () => {
    readyz = await api('GET', '/readyz')
    return readyz.status === 503
  }, 20_000)
  t.equal(readyz.body.status, 'degraded')
  t.match(readyz.body.reasons, [{ component: 'egress', problem: 'dns_failing' }], 'the reason: DNS failing')

  const held = await Promise.all(
    ['jane@held-corp.com', 'nobody@held-corp.com'].map(async email => (await api('POST', '/api/verify', { token: key, body: { email } })).body.uuid as string)
  )
  for (const uuid of held) {
    await waitUntil(async () => (await api('GET', `/api/verify/${uuid}`, { token: key })).body.status === 'deferred', 20_000)
    t.pass(`job ${uuid} is held (deferred), not burned as unknown`)
  }
  // A list too: its live part waits rather than ending unknown.
  const list = await api('POST', '/api/batches', { token: key, body: { emails: ['jane@held-corp.com', 'nobody@held-corp.com'], final: true } })
  t.equal(list.status, 202, JSON.stringify(list.body))
  // A test key's job needs no egress: it completes meanwhile (the positive control of "held").
  const testKey = (await api('POST', '/api/keys', { token, body: { name: 'test', environment: 'test' } })).body.raw_key as string
  const sandboxed = await api('POST', '/api/verify', { token: testKey, body: { email: 'valid@held-corp.com' } })
  await waitUntil(async () => (await api('GET', `/api/verify/${sandboxed.body.uuid}`, { token: testKey })).body.status === 'completed', 20_000)
  for (const uuid of held) t.equal((await api('GET', `/api/verify/${uuid}`, { token: key })).body.status, 'deferred', 'still held')
  t.equal((await api('GET', `/api/batches/${list.body.uuid}`, { token: key })).body.progress.pending, 2, "the list's addresses are held too")

  // Whoever runs the service sees it on the console's overview.
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const w = await openConsole(browser, service.url)
  await w.page.goto(`${service.url}/signin`)
  await fill(w.page, 'Email address', 'held@example.com')
  await fill(w.page, 'Password', 'correct horse battery staple')
  await press(w.page, 'Sign in')
  await waitForText(w.page, /Live checks are on hold/)
  t.match(await textOf(w.page), /DNS does not answer/, 'the overview says why live checks are held')
  await w.close()

  dns.alive = true
  await waitUntil(async () => (await api('GET', '/readyz')).status === 200, 20_000)
  t.pass('/readyz ready again')
  const views = new Map<string, any>()
  await waitUntil(async () => {
    for (const uuid of held) views.set(uuid, (await api('GET', `/api/verify/${uuid}`, { token: key })).body)
    return [...views.values()].every(v => v.status === 'completed')
  }, 30_000)
  t.equal(views.get(held[0]).verdict, 'valid', 'jane: valid, as the world says')
  t.equal(views.get(held[1]).verdict, 'invalid', 'nobody: invalid, as the world says')
  await waitUntil(async () => (await api('GET', `/api/batches/${list.body.uuid}`, { token: key })).body.status === 'completed', 30_000)
  const rows = (await api('GET', `/api/batches/${list.body.uuid}/results?limit=10`, { token: key })).body.items as Array<{ email: string; verdict: string }>
  t.same(
    rows.map(r => [r.email, r.verdict]),
    [
      ['jane@held-corp.com', 'valid'],
      ['nobody@held-corp.com', 'invalid']
    ],
    "the list completed with the world's answers once egress worked again"
  )
  const jobs = world.connection_log.filter(c => c.ip === '127.0.81.10' && c.commands.some(l => /^RCPT TO:<(jane|nobody)@/i.test(l)))
  t.ok(jobs.length >= 1, 'they were asked once egress worked again')
})
