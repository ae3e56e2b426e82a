import t from 'tap'
import { startDnsRelay } from '../support/dns-relay.ts'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { unlimitedRates } from '../support/plans.ts'
import { assertClean, axeViolations, fill, launchChromium, openConsole, press, textOf, waitForText } from '../support/console.ts'

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
  const holdS = (await api('GET', '/api/config')).body.egress_hold_s as number
  t.equal(holdS, 3600, 'the hold the service announces: VERIFIER_EGRESS_HOLD_S (default 1 hour)')
  for (const uuid of held) {
    let view: any = null
    await waitUntil(async () => {
      view = (await api('GET', `/api/verify/${uuid}`, { token: key })).body
      return view.status === 'deferred'
    }, 20_000)
    t.pass(`job ${uuid} is held (deferred), not burned as unknown`)
    t.equal(view.deferral?.reason, 'egress_blocked', 'the job says why in its fields: egress_blocked')
    t.equal(Date.parse(view.deferral.deadline_at) - Date.parse(view.created_at), holdS * 1000, 'and until when: its submission plus the hold')
    t.equal(view.charged, null, 'nothing charged while held')
  }
  // A list too: its live part waits rather than ending unknown, and says so.
  const list = await api('POST', '/api/batches', { token: key, body: { emails: ['jane@held-corp.com', 'nobody@held-corp.com'], final: true } })
  t.equal(list.status, 202, JSON.stringify(list.body))
  let heldList: any = null
  await waitUntil(async () => {
    heldList = (await api('GET', `/api/batches/${list.body.uuid}`, { token: key })).body
    return heldList.held !== null
  }, 20_000)
  t.equal(heldList.held.reason, 'egress_blocked', 'the batch says why in its fields')
  t.ok(Date.parse(heldList.held.until) - Date.parse(heldList.created_at) >= holdS * 1000 - 1000, 'until its part has waited the hold')
  // A test key's job needs no egress: it completes meanwhile (the positive control of "held").
  const testKey = (await api('POST', '/api/keys', { token, body: { name: 'test', environment: 'test' } })).body.raw_key as string
  const sandboxed = await api('POST', '/api/verify', { token: testKey, body: { email: 'valid@held-corp.com' } })
  await waitUntil(async () => (await api('GET', `/api/verify/${sandboxed.body.uuid}`, { token: testKey })).body.status === 'completed', 20_000)
  for (const uuid of held) t.equal((await api('GET', `/api/verify/${uuid}`, { token: key })).body.status, 'deferred', 'still held')
  t.equal((await api('GET', `/api/batches/${list.body.uuid}`, { token: key })).body.progress.pending, 2, "the list's addresses are held too")

  // The console says it at once, on every page that starts live work, and offers test mode.
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const w = await openConsole(browser, service.url)
  await w.page.goto(`${service.url}/signin`)
  await fill(w.page, 'Email address', 'held@example.com')
  await fill(w.page, 'Password', 'correct horse battery staple')
  await press(w.page, 'Sign in')
  await waitForText(w.page, /Live checks are on hold/)
  t.match(await textOf(w.page), /its DNS does not answer/, "the overview says why, in the customer's words")
  t.match(await textOf(w.page), /waits up to 1 hour with its tokens reserved/, 'how long a check waits, and that its tokens are reserved')
  t.notMatch(
    await textOf(w.page),
    /mx\.held-corp|127\.0\.|no answer in time/,
    "never the operator's detail (the self-test's MX, a resolver's address or error)"
  )
  await w.page.goto(`${service.url}/lists/${list.body.uuid}`)
  await waitForText(w.page, /Held: this service cannot reach mail servers/)
  t.match(await textOf(w.page), /Live checks are on hold/, 'the Lists page says so too')
  await w.page.goto(`${service.url}/verify`)
  await waitForText(w.page, /Live checks are on hold/)
  await fill(w.page, 'Email address', 'jane@held-corp.com')
  await press(w.page, 'Verify')
  await waitForText(w.page, /Held: this service cannot reach mail servers right now/)
  t.same(await axeViolations(w.page), [], 'axe: Verify with its notice and a held job')
  const newest = (await api('GET', '/api/jobs?limit=1&environment=live', { token })).body.items[0]
  t.same([newest.email, newest.status, newest.deferral?.reason], ['jane@held-corp.com', 'deferred', 'egress_blocked'], "the page's job, read back: held")
  // Test mode from the notice: the same address answered by the sandbox, free, marked Test.
  const balance = (await api('GET', '/api/wallet', { token })).body.balance
  await press(w.page, 'switch to test mode')
  await waitForText(w.page, /Test mode\./)
  t.notMatch(await textOf(w.page), /Live checks are on hold/, 'no hold notice in test mode: the sandbox needs no mail server')
  await fill(w.page, 'Email address', 'valid@held-corp.com')
  await press(w.page, 'Verify')
  await w.page.waitForSelector('[data-testid="result"] [data-testid="env-test"]', { timeout: 20_000 })
  const sandboxJob = (await api('GET', '/api/jobs?limit=1&environment=test', { token })).body.items[0]
  t.same(
    [sandboxJob.email, sandboxJob.environment, sandboxJob.status, sandboxJob.verdict, sandboxJob.cost],
    ['valid@held-corp.com', 'test', 'completed', 'valid', 0]
  )
  t.equal((await api('GET', '/api/wallet', { token })).body.balance, balance, 'test mode spent no token')
  await w.page.goto(`${service.url}/jobs`)
  await waitForText(w.page, /valid@held-corp\.com/)
  t.notMatch(await textOf(w.page), /jane@held-corp\.com/, "test mode's Jobs show the sandbox's jobs only")
  t.ok(await w.page.$('[data-testid="env-test"]'), 'each marked Test')
  assertClean(t, w, 'the held console, English')
  await w.close()

  // In French, at 390 px: the same, in French words.
  const fr = await openConsole(browser, service.url, { width: 390 })
  await fr.page.goto(`${service.url}/signin`)
  await press(fr.page, 'Français')
  await fill(fr.page, 'Adresse e-mail', 'held@example.com')
  await fill(fr.page, 'Mot de passe', 'correct horse battery staple')
  await press(fr.page, 'Se connecter')
  await waitForText(fr.page, /Les vérifications réelles sont en attente/)
  t.match(await textOf(fr.page), /son DNS ne répond pas/, 'why, in French')
  t.match(await textOf(fr.page), /passez en mode test/, 'and what to do')
  t.notMatch(await textOf(fr.page), /DNS does not answer|Live checks/, 'no English left')
  t.equal((await api('GET', '/api/users/me', { token })).body.locale, 'fr', "French chosen before signing in is kept: the account's locale now")
  t.ok(await fr.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no page wider than 390 px')
  assertClean(t, fr, 'the held console, French at 390 px')
  await fr.close()

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
