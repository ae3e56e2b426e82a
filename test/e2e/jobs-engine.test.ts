import t from 'tap'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp, settled, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { unlimitedRates } from '../support/plans.ts'

// This file owns 127.0.22.0/24.
const exists = (a: string): { code: number; message: string } =>
  /^(jane|x)@/.test(a) ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' }
const world = await startMailWorld({
  dns_ip: '127.0.22.1',
  domains: [
    { name: 'grey-then-ok.com', mx: [{ preference: 10, exchange: 'mx.grey-then-ok.com' }] },
    { name: 'grey-forever.com', mx: [{ preference: 10, exchange: 'mx.grey-forever.com' }] },
    { name: 'plain.com', mx: [{ preference: 10, exchange: 'mx.plain.com' }] }
  ],
  hosts: [
    { name: 'mx.grey-then-ok.com', ip: '127.0.22.2', rcpt: exists, greylist_ms: 400 },
    { name: 'mx.grey-forever.com', ip: '127.0.22.3', rcpt: exists, greylist_ms: 3_600_000 },
    { name: 'mx.plain.com', ip: '127.0.22.4', rcpt: exists }
  ]
})
t.teardown(() => world.close())

const dataDir = t.testdir()
const service = await startTestService(
  testConfig(dataDir, {
    VERIFIER_DNS_SERVERS: world.dns_server,
    VERIFIER_GREYLIST_RETRY_S: '0.5',
    VERIFIER_GREYLIST_DEADLINE_S: '2.5',
    ...unlimitedRates(dataDir)
  })
)
t.teardown(() => service.close())
const api = client(service.url)
const token = await signUp(api, dataDir, 'dev@example.com')
const key = (await api('POST', '/api/keys', { token, body: { name: 'k', environment: 'live' } })).body.raw_key as string
const balance = async (): Promise<{ balance: number; reserved: number; spent: number }> => (await api('GET', '/api/wallet', { token })).body

t.test('greylisted then accepted: the job shows `deferred`, then completes valid', async t => {
  const r = await api('POST', '/api/verify', { token: key, body: { email: 'jane@grey-then-ok.com' } })
  t.equal(r.status, 202)
  const statuses = new Set<string>()
  let job: any
  await waitUntil(async () => {
    job = (await api('GET', `/api/verify/${r.body.uuid}`, { token: key })).body
    statuses.add(job.status)
    return job.status === 'completed'
  }, 15_000)
  t.ok(statuses.has('deferred'), `statuses seen: ${[...statuses].join(', ')}`)
  t.equal(job.verdict, 'valid')
  t.equal(job.reason, 'accepted_email')
  t.ok(job.attempts >= 1)
})

t.test('greylisted past the deadline: unknown/greylisted, and it costs nothing', async t => {
  const before = await balance()
  const r = await api('POST', '/api/verify', { token: key, body: { email: 'jane@grey-forever.com' } })
  const job = await (async () => {
    let j: any
    await waitUntil(async () => {
      j = (await api('GET', `/api/verify/${r.body.uuid}`, { token: key })).body
      return j.status === 'completed'
    }, 15_000)
    return j
  })()
  t.equal(job.verdict, 'unknown')
  t.equal(job.reason, 'greylisted')
  // Retries 0.5 s after it was queued, then each 1.25× as far from then (0.625 s, 0.78 s,
  // … 2.38 s), at least 0.125 s after the last answer; the next would pass the 2.5 s
  // deadline, so the last one is at the deadline (not given up early): 9 retries at most on
  // time, fewer when the answers come late; every deferral a retry.
  t.ok(job.attempts >= 5 && job.attempts <= 9, `deferred ${job.attempts} times, 5 to 9 on the schedule`)
  const asked = world.connection_log
    .filter(c => c.ip === '127.0.22.3')
    .flatMap(c => c.commands)
    .filter(l => /^RCPT TO:<jane@grey-forever\.com>/i.test(l))
  t.equal(asked.length, job.attempts + 1, 'the world was asked once more than the job was deferred (the last at the deadline)')
  t.ok(
    Date.parse(job.completed_at) >= Date.parse(job.created_at) + 2_500,
    `given up at the deadline (created ${job.created_at}, completed ${job.completed_at}), not at the retry before it`
  )
  await waitUntil(async () => (await balance()).reserved === 0)
  t.equal((await balance()).balance, before.balance, 'the reservation was released')
  t.same([job.cost > 0, job.charged], [true, 0], 'the job says a price was reserved and nothing was taken')
})

t.test('the reservation is the sum of the requested checks and their dependencies', async t => {
  const before = await balance()
  const r = await api('POST', '/api/verify', { token: key, body: { email: 'jane@plain.com', checks: ['dns', 'disposable'] } })
  t.equal(r.status, 202)
  t.same(r.body.checks, ['syntax', 'disposable', 'dns'])
  t.equal(r.body.cost, 2)
  const job = await settled(api, key, r.body.uuid)
  t.same([job.verdict, job.reason], ['unknown', 'smtp_not_requested'], 'the mailbox was not asked (SMTP not requested): said so, not as a failure')
  t.same(
    job.result.checks.map((c: { name: string }) => c.name),
    ['syntax', 'disposable', 'dns'],
    'the checks that ran, each with its outcome'
  )
  await waitUntil(async () => (await balance()).reserved === 0)
  t.equal((await balance()).balance, before.balance - 2, 'the checks asked for answered: they are charged (2 tokens), not released as a failure would be')
  t.same([job.cost, job.charged], [2, 2], "the job says what was reserved and what was taken: the wallet's figure")
})

t.test('a repeat within the cache TTL is answered from the cache', async t => {
  const first = await settled(api, key, (await api('POST', '/api/verify', { token: key, body: { email: 'x@plain.com' } })).body.uuid)
  t.equal(first.result.cached, false)
  const rcpts = world.transcript.length
  const again = await settled(api, key, (await api('POST', '/api/verify', { token: key, body: { email: 'x@plain.com' } })).body.uuid)
  t.equal(again.result.cached, true)
  t.equal(again.verdict, 'valid')
  t.equal(world.transcript.length, rcpts, 'no SMTP for the repeat')
})

t.test('per-key enabled_checks: a check the key does not enable is refused with 403', async t => {
  const limited = await api('POST', '/api/keys', { token, body: { name: 'syntax only', environment: 'live', enabled_checks: ['syntax', 'dns'] } })
  t.equal(limited.status, 201)
  t.same(limited.body.enabled_checks, ['syntax', 'dns'])
  const refused = await api('POST', '/api/verify', { token: limited.body.raw_key, body: { email: 'jane@plain.com' } })
  t.equal(refused.status, 403)
  t.equal(refused.body.code, 'submit_job.check_not_enabled')
  const ok = await api('POST', '/api/verify', { token: limited.body.raw_key, body: { email: 'jane@plain.com', checks: ['dns'] } })
  t.equal(ok.status, 202)
})

t.test('sandbox keys: every magic local part, no network, no wallet', async t => {
  const test = (await api('POST', '/api/keys', { token, body: { name: 'sandbox', environment: 'test' } })).body.raw_key
  await waitUntil(async () => (await balance()).reserved === 0)
  const before = { rcpts: world.transcript.length, wallet: await balance() }
  const magic: Array<[string, string, string]> = [
    ['valid', 'valid', 'accepted_email'],
    ['invalid', 'invalid', 'mailbox_not_found'],
    ['accept-all', 'risky', 'accept_all'],
    ['disposable', 'risky', 'disposable'],
    ['role', 'risky', 'role_account'],
    ['mailbox-full', 'risky', 'mailbox_full'],
    ['greylisted', 'unknown', 'greylisted'],
    ['timeout', 'unknown', 'timeout'],
    ['unknown', 'unknown', 'smtp_unavailable'],
    ['anyone', 'valid', 'accepted_email']
  ]
  for (const [local, verdict, reason] of magic) {
    const r = await api('POST', '/api/verify', { token: test, body: { email: `${local}@grey-forever.com` } })
    const job = await settled(api, test, r.body.uuid)
    t.equal(job.status, 'completed', local)
    t.equal(`${job.verdict}/${job.reason}`, `${verdict}/${reason}`, local)
    t.equal(job.result.sandbox, true)
  }
  t.equal(world.transcript.length, before.rcpts, 'no SMTP traffic')
  t.same(await balance(), before.wallet, 'the wallet did not move')
})
