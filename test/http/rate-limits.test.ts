import t, { type Test } from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { randomUUID } from 'node:crypto'
import { client, signUp, startTestService, testConfig, type Api } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { startSvc } from '../support/processes.ts'
import { plansFile } from '../support/plans.ts'
import { natsAnswers } from '../../src/infra/bus/nats.ts'

// Per-key and per-agent rate limits from the plan (docs/interface.md §8), counted in
// fixed windows of 60 s aligned to the epoch. Free allows N = 5 per window here,
// Starter 8 (a plan file of the test's own). A burst of 2N gets exactly N answers that
// are not 429, in one process and spread over two `svc api` processes on NATS. Sessions
// (issue 42, item 4) count per account, at ten times the plan's rate (docs/security.md).
const N = 5
const STARTER = 8
const WINDOW_MS = 60_000
const cli = new URL('../../src/cli.ts', import.meta.url).pathname
const run = promisify(execFile)

// Each part's DATA_DIR under this file's fixture, removed when the whole file is done (a
// subtest's own fixture would be removed while its service still writes the outbox).
const root = t.testdir()
const dirFor = (name: string): string => {
  const d = join(root, name)
  mkdirSync(d, { recursive: true })
  return d
}

/** Waits, when less than 15 s are left in the current window, for the next one (a burst must fall in one window). */
async function windowWithRoom(): Promise<void> {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS)
  if (left < 15_000) await new Promise(resolve => setTimeout(resolve, left + 100))
}

type Answer = Awaited<ReturnType<Api>>

/** Checks a burst's answers: exactly `limit` not 429, the headers of each (section 8; RateLimit-* as in the IETF draft). */
function checkBurst(t: Test, answers: Answer[], limit: number, label: string): void {
  const passed = answers.filter(a => a.status !== 429)
  const refused = answers.filter(a => a.status === 429)
  t.equal(passed.length, limit, `${label}: exactly ${limit} of ${answers.length} not 429`)
  t.equal(refused.length, answers.length - limit, `${label}: the rest 429`)
  t.same(
    passed.map(a => Number(a.headers.get('ratelimit-remaining'))).sort((a, b) => a - b),
    Array.from({ length: limit }, (_, i) => i),
    `${label}: RateLimit-Remaining counts down to 0`
  )
  for (const a of answers) {
    t.equal(a.headers.get('ratelimit-limit'), String(limit), `${label}: RateLimit-Limit on every answer`)
    const reset = Number(a.headers.get('ratelimit-reset'))
    t.ok(reset >= 1 && reset <= 60, `${label}: RateLimit-Reset ${reset} s within the window`)
  }
  for (const a of refused) {
    t.equal(a.headers.get('retry-after'), a.headers.get('ratelimit-reset'), `${label}: Retry-After on a 429`)
    t.equal(a.headers.get('ratelimit-remaining'), '0')
    t.match(a.headers.get('content-type'), /^application\/problem\+json/)
    t.equal(a.body.code, 'rate_limit.exceeded')
  }
}

t.test('embedded default: keys and agent tokens are limited by the plan, a plan change applies', async t => {
  const dataDir = dirFor('embedded')
  const PLANS_FILE = plansFile(dataDir, { free: { rate_limit_per_minute: N }, starter: { rate_limit_per_minute: STARTER } })
  const service = await startTestService(testConfig(dataDir, { PLANS_FILE }))
  t.teardown(() => service.close())
  const api = client(service.url)
  const email = `limited-${randomUUID().slice(0, 8)}@example.com`
  const token = await signUp(api, dataDir, email)
  const key = async (): Promise<{ uuid: string; raw_key: string }> =>
    (await api('POST', '/api/keys', { token, body: { name: 'burst', environment: 'test' } })).body
  const k1 = await key()
  const k2 = await key()

  await windowWithRoom()
  checkBurst(t, await Promise.all(Array.from({ length: 2 * N }, async () => await api('GET', '/api/keys/me', { token: k1.raw_key }))), N, 'a key')
  const elsewhere = await api('GET', '/api/jobs', { token: k1.raw_key })
  t.equal(elsewhere.status, 429, "the count is the key's across operations")
  t.equal((await api('GET', `/api/verify/${randomUUID()}`, { token: k1.raw_key })).status, 429, 'reading a job too')
  const bad = await api('POST', '/api/verify', { token: k1.raw_key, body: { not: 'valid' } })
  t.equal(bad.status, 429, 'a malformed request past the limit is a 429 too (counted before the body is read)')
  const fresh = await api('GET', '/api/keys/me', { token: k2.raw_key })
  t.equal(fresh.status, 200, 'another key has its own count')
  t.equal(fresh.headers.get('ratelimit-remaining'), String(N - 1))

  const agent = (await api('POST', '/api/agents', { token, body: { name: 'bursty', scopes: ['results:read'] } })).body.token
  await windowWithRoom()
  checkBurst(t, await Promise.all(Array.from({ length: 2 * N }, async () => await api('GET', '/api/jobs', { token: agent }))), N, 'an agent token')

  t.equal(
    (await api('GET', '/api/config')).headers.get('ratelimit-limit'),
    '600',
    'public reads are limited per client address (PUBLIC_RATE_LIMIT_PER_MINUTE), not by a plan'
  )

  // The operator moves the account to Starter (the events billing appends); the keys' limit follows.
  const { stdout } = await run(process.execPath, [cli, 'subscription', 'set', '--email', email, '--plan', 'starter'], {
    env: { ...process.env, DATA_DIR: dataDir, PLANS_FILE, LOG_LEVEL: 'silent' }
  })
  t.match(JSON.parse(stdout), { subscription: { plan: 'starter' }, changed: true })
  await waitUntil(async () => (await api('GET', '/api/subscription', { token })).body.plan.code === 'starter', 10_000)
  const listed = await api('GET', '/api/keys', { token })
  t.ok(
    listed.body.every((k: any) => k.rate_limit_per_minute === STARTER),
    "every key shows the new plan's limit"
  )
  t.equal((await api('GET', '/api/keys/me', { token: k1.raw_key })).headers.get('ratelimit-limit'), String(STARTER), 'the limited key is realigned at once')
  const k3 = await key()
  await windowWithRoom()
  checkBurst(
    t,
    await Promise.all(Array.from({ length: 2 * STARTER }, async () => await api('GET', '/api/keys/me', { token: k3.raw_key }))),
    STARTER,
    'a key after the plan change'
  )
})

t.test("sessions: all of an account's sessions on one count, ten times the plan's rate", async t => {
  const dataDir = dirFor('sessions')
  const PLANS_FILE = plansFile(dataDir, { free: { rate_limit_per_minute: N } })
  const service = await startTestService(testConfig(dataDir, { PLANS_FILE }))
  t.teardown(() => service.close())
  const api = client(service.url)
  const email = `sessions-${randomUUID().slice(0, 8)}@example.com`
  const first = await signUp(api, dataDir, email)
  const login = await api('POST', '/api/auth/login', { body: { email, password: 'correct horse battery staple' } })
  t.equal(login.status, 200, 'a second sign-in: a second session')
  const second = login.body.access_token as string
  const other = await signUp(api, dataDir, `sessions-other-${randomUUID().slice(0, 8)}@example.com`)
  const SESSIONS = 10 * N
  await windowWithRoom()
  // Both sessions, on an operation keys may call too and on a session-only one (the profile).
  const answers = await Promise.all(
    Array.from({ length: 2 * SESSIONS }, async (_, i) => await api('GET', i % 2 === 0 ? '/api/keys' : '/api/users/me', { token: i % 4 < 2 ? first : second }))
  )
  checkBurst(t, answers, SESSIONS, "an account's two sessions")
  t.ok(
    answers.filter((_, i) => i % 4 < 2).some(a => a.status === 429) && answers.filter((_, i) => i % 4 >= 2).some(a => a.status === 429),
    'each session met the shared count'
  )
  const another = await api('GET', '/api/users/me', { token: other })
  t.equal(another.status, 200, 'another account has its own count')
  t.equal(another.headers.get('ratelimit-limit'), String(SESSIONS))
  t.equal(another.headers.get('ratelimit-remaining'), String(SESSIONS - 1))
})

t.test('production topology: one count across two `svc api` processes on NATS', async t => {
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'
  if (!(await natsAnswers(natsUrl))) {
    t.fail(`no NATS server answers at ${natsUrl}: .ci/run starts one`)
    return
  }
  const dataDir = dirFor('two-processes')
  const PLANS_FILE = plansFile(dataDir, { free: { rate_limit_per_minute: N } })
  // The account and its key, made on the embedded default, then served by two API processes.
  let raw: string
  {
    const service = await startTestService(testConfig(dataDir, { PLANS_FILE }))
    const api = client(service.url)
    const token = await signUp(api, dataDir, 'two-processes@example.com')
    raw = (await api('POST', '/api/keys', { token, body: { name: 'shared', environment: 'test' } })).body.raw_key
    await service.close()
  }
  const { NATS_URL: _, ...inherited } = process.env
  const env = {
    ...inherited,
    DATA_DIR: dataDir,
    PLANS_FILE,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    SIGNUP_SCREENING: 'lists',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
    NATS_URL: natsUrl,
    NATS_PREFIX: `rl_${randomUUID().slice(0, 8)}`
  }
  const a = await startSvc(t, ['api'], env)
  const b = await startSvc(t, ['api'], env)
  const apis = [client(a.url), client(b.url)]
  await waitUntil(async () => (await Promise.all(apis.map(async x => (await x('GET', '/readyz')).status))).every(s => s === 200), 20_000)
  await windowWithRoom()
  const answers = await Promise.all(Array.from({ length: 2 * N }, async (_, i) => await apis[i % 2]('GET', '/api/keys/me', { token: raw })))
  checkBurst(t, answers, N, 'a key over two processes')
  t.ok(
    answers.filter((_, i) => i % 2 === 0).some(r => r.status === 429) || answers.filter((_, i) => i % 2 === 1).some(r => r.status === 429),
    'refusals came from the shared count'
  )
})

t.test('public reads: limited per client address; every 429 says when to come back', async t => {
  const dir = t.testdir()
  const small = await startTestService(testConfig(dir, { PUBLIC_RATE_LIMIT_PER_MINUTE: '3' }))
  t.teardown(() => small.close())
  const statuses: number[] = []
  let last: Response | null = null
  for (let i = 0; i < 4; i++) {
    last = await fetch(`${small.url}/api/config`)
    statuses.push(last.status)
  }
  t.same(statuses, [200, 200, 200, 429], 'three a minute here, then 429')
  t.ok(Number(last!.headers.get('retry-after')) > 0, 'with Retry-After')
  t.match(await last!.json(), { status: 429, code: 'rate_limit.exceeded' })
  const wrong = await fetch(`${small.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'no-one@example.com', password: 'wrong password here' })
  })
  t.equal(wrong.status, 401, 'a public write has its own throttle, not this one')
})
