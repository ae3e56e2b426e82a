import t from 'tap'
import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { client, signUp, startTestService, testConfig, responseViolations, type Api } from '../support/service.ts'
import { checkResponses } from '../support/response-check.ts'
import { startRole, type Service } from '../../src/main.ts'
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store.ts'
import { prng } from '../support/random.ts'

// The read side over HTTP: GET /api/jobs (+ detail), the wallet reads, the statistics and
// the notification feed, every parameter, sort, order and error. The oracle is the events
// this test writes itself (and reads back from the event store): lists are recomputed here
// from them with the interface's rules, never taken from the code under test.

const dataDir = t.testdir()
const config = testConfig(dataDir)

// Phase 1: the whole service, to sign two accounts up (confirmation mails need the mailer).
let service: Service = await startTestService(config)
let api: Api = client(service.url)
const tokenA = await signUp(api, dataDir, 'ada@example.com')
const tokenB = await signUp(api, dataDir, 'bob@example.com')
await service.close()

// Phase 2: the API role alone (no bus, no engine): the jobs written below as the engine
// would write them stay as they are.
service = await startRole('api', config, { logger: pino({ level: 'silent' }), instrument: checkResponses(responseViolations) })
t.teardown(() => service.close())
api = client(service.url)
const store = service.core.store
const sealer = service.core.ctx.sealer
const realNow = service.core.ctx.now
const A = (await api('GET', '/api/users/me', { token: tokenA })).body.uuid as string
const B = (await api('GET', '/api/users/me', { token: tokenB })).body.uuid as string
/** A test key of A's: it reads the sandbox's jobs and usage only (issue 42 item 10). */
const sandboxKey = (
  await api('POST', '/api/keys', { token: tokenA, body: { name: 'sandbox reader', environment: 'test', scopes: ['results:read', 'usage:read'] } })
).body.raw_key as string

const SEED = Number(process.env.READ_SIDE_SEED ?? 20261123)
t.comment(`seed ${SEED}`)
const rnd = prng(SEED)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
/** Null first, then the natural order of strings and numbers. */
const cmp = (a: unknown, b: unknown): number => (a === b ? 0 : a === null ? -1 : b === null ? 1 : (a as string | number) < (b as string | number) ? -1 : 1)
const iso = (ms: number): string => new Date(ms).toISOString()
const event = (type: string, data: Record<string, unknown>, at: string): NewEvent => ({ id: randomUUID(), type, data, metadata: { occurred_at: at } })

const DAY = 86_400_000
const HOUR = 3_600_000
/** Midnight UTC of the last Sunday of `month` (0-based) in `year`: the EU's changes of time fall on it at 01:00Z (Directive 2000/84/EC, arts. 2 and 3). */
const lastSunday = (year: number, month: number): number => {
  const last = Date.UTC(year, month + 1, 0)
  return last - new Date(last).getUTCDay() * DAY
}
// The window: 346 days and 15 hours ending 5 days after Paris's change back to winter time,
// across its change to summer time, in the first year whose window starts after this run's
// real events (the sign-up's grant): a stream's events are appended in the order they
// happen, so the seeded ones, appended after the real ones, must not happen before them.
let YEAR = new Date().getUTCFullYear()
while (lastSunday(YEAR, 9) + 5 * DAY - 346 * DAY <= Date.now() + DAY) YEAR++
const SPRING = lastSunday(YEAR, 2)
const AUTUMN = lastSunday(YEAR, 9)
const NOW = AUTUMN + 5 * DAY + 15 * HOUR
const START = AUTUMN + 5 * DAY - 346 * DAY
const ymd = (ms: number): string => new Date(ms).toISOString().slice(0, 10)
/** Instants the jobs are made at: random, plus some around Paris's local midnights of the two changes (UTC+1 before spring and after autumn, UTC+2 between). */
const EDGES = [...[SPRING - HOUR, SPRING + 22 * HOUR, AUTUMN - 2 * HOUR, AUTUMN + 23 * HOUR].flatMap(midnight => [midnight - 1, midnight]), NOW - 1000]

interface TestJob {
  uuid: string
  owner: string
  /** A quarter are a test key's (the sandbox: no cost, a simulated result). */
  environment: 'live' | 'test'
  email: string
  status: 'queued' | 'deferred' | 'completed' | 'failed'
  verdict: string | null
  reason: string | null
  score: number | null
  created_at: string
  done_at: string | null
  cost: number
  charge: number
  checks: Array<{ name: string; outcome: string }>
}

const CHECKS = ['syntax', 'typo', 'disposable', 'dns', 'smtp']
const REASONS: Record<string, string[]> = {
  valid: ['accepted_email'],
  invalid: ['rejected_email', 'invalid_syntax', 'no_mail_server'],
  risky: ['accept_all', 'disposable'],
  unknown: ['timeout']
}

function makeJob(owner: string, createdMs: number): TestJob {
  const status = pick(['queued', 'deferred', 'completed', 'completed', 'completed', 'failed'] as const)
  const verdict = status === 'completed' ? pick(['valid', 'invalid', 'risky', 'unknown']) : null
  const environment = rnd() < 0.25 ? 'test' : 'live'
  const cost = environment === 'test' ? 0 : pick([1, 3, 5])
  const doneMs = createdMs + Math.floor(rnd() * 3 * 3_600_000)
  return {
    uuid: randomUUID(),
    owner,
    environment,
    email: `person${Math.floor(rnd() * 1e6)}@example.org`,
    status,
    verdict,
    reason: verdict ? pick(REASONS[verdict]) : null,
    score: verdict ? pick([0, 20, 50, 80, 100]) : null,
    created_at: iso(createdMs),
    done_at: status === 'completed' || status === 'failed' ? iso(Math.min(doneMs, NOW - 1000)) : null,
    cost,
    charge: verdict === 'unknown' || verdict === null ? 0 : Math.min(cost, pick([1, cost])),
    checks: CHECKS.map(name => ({ name, outcome: pick(['pass', 'pass', 'fail', 'skipped']) }))
  }
}

async function jobEvents(j: TestJob): Promise<NewEvent[]> {
  const out = [
    event(
      'JobQueued',
      {
        job_uuid: j.uuid,
        user_uuid: j.owner,
        email: await sealer.seal(j.owner, j.email),
        checks: CHECKS,
        cost: j.cost,
        environment: j.environment,
        key_uuid: null,
        reservation_uuid: j.environment === 'test' ? null : randomUUID(),
        queued_at: j.created_at
      },
      j.created_at
    )
  ]
  if (j.status === 'deferred')
    out.push(
      event(
        'JobDeferred',
        {
          job_uuid: j.uuid,
          user_uuid: j.owner,
          attempt: 1,
          reason: 'greylisted',
          retry_at: iso(Date.parse(j.created_at) + 60_000),
          deadline_at: iso(Date.parse(j.created_at) + 3_600_000),
          deferred_at: j.created_at
        },
        j.created_at
      )
    )
  // A live job's failure without its environment (as written before events carried it: read as live), a sandbox one's with it.
  const failure = {
    job_uuid: j.uuid,
    user_uuid: j.owner,
    ...(j.environment === 'test' && { environment: 'test' }),
    error: 'engine crashed',
    failed_at: j.done_at
  }
  if (j.status === 'failed') out.push(event('JobFailed', failure, j.done_at!))
  if (j.status === 'completed') {
    const result = {
      normalized: await sealer.seal(j.owner, j.email),
      verdict: j.verdict,
      reason: j.reason,
      score: j.score,
      score_breakdown: [{ factor: 'smtp', points: j.score }],
      flags: [],
      did_you_mean: null,
      mx: { host: 'mx.example.org', preference: 10, provider: null },
      smtp: { code: 250, enhanced_code: '2.1.5', message: 'OK' },
      checks: j.checks.map(c => ({ ...c, duration_ms: 3, detail: null })),
      retryable: false,
      checked_at: j.done_at,
      cached: false,
      sandbox: j.environment === 'test'
    }
    // Half of them without the environment (as written before events carried it: read from `sandbox`).
    const environment = rnd() < 0.5 ? { environment: j.environment } : {}
    out.push(
      event(
        'JobCompleted',
        {
          job_uuid: j.uuid,
          user_uuid: j.owner,
          ...environment,
          verdict: j.verdict,
          reason: j.reason,
          score: j.score,
          charge: j.charge,
          result,
          completed_at: j.done_at
        },
        j.done_at!
      )
    )
  }
  return out
}

const jobs: TestJob[] = []
for (let i = 0; i < 170; i++) jobs.push(makeJob(A, i < EDGES.length ? EDGES[i] : START + Math.floor(rnd() * (NOW - START - 4 * 3_600_000))))
for (let i = 0; i < 6; i++) jobs.push(makeJob(B, START + Math.floor(rnd() * (NOW - START - 4 * 3_600_000))))
const jobsA = jobs.filter(j => j.owner === A)

// The wallet of A: its real grant (from sign-up), then a reservation per job, settled by a capture of the charge and a release of the rest; grants now and then.
let revision = (await store.readStream(`wallet-${A}`)).length - 1
const walletEvents: NewEvent[] = []
for (const j of [...jobsA].sort((x, y) => (x.created_at < y.created_at ? -1 : 1))) {
  if (j.environment === 'test') continue
  if (rnd() < 0.05)
    walletEvents.push(
      event(
        'TokensGranted',
        { user_uuid: A, grant_uuid: randomUUID(), amount: pick([50, 100]), source: 'operator', plan: null, reason: 'top-up', granted_at: j.created_at },
        j.created_at
      )
    )
  walletEvents.push(
    event('TokensReserved', { user_uuid: A, job_uuid: j.uuid, reservation_uuid: randomUUID(), amount: j.cost, reserved_at: j.created_at }, j.created_at)
  )
  if (j.done_at === null) continue
  if (j.charge > 0) walletEvents.push(event('TokensCaptured', { user_uuid: A, job_uuid: j.uuid, amount: j.charge, captured_at: j.done_at }, j.done_at))
  if (j.cost > j.charge)
    walletEvents.push(
      event('TokensReleased', { user_uuid: A, job_uuid: j.uuid, amount: j.cost - j.charge, reason: 'unused_checks', released_at: j.done_at }, j.done_at)
    )
}
// A stream's events are appended in the order they happen (occurred_at is stamped at append).
walletEvents.sort((x, y) => cmp(x.metadata.occurred_at, y.metadata.occurred_at))
for (let i = 0; i < walletEvents.length; i += 50) {
  const r = await store.append(`wallet-${A}`, walletEvents.slice(i, i + 50), { expected_revision: revision })
  revision = r.next_expected_revision
}
for (const j of jobs) await store.append(`job-${j.uuid}`, await jobEvents(j), { expected_revision: 'no_stream' })
t.ok(await service.runner!.waitFor(await store.headPosition(), 30_000), 'the read models caught up')

const ledgerA: RecordedEvent[] = (await store.readStream(`wallet-${A}`)).filter(e => e.type !== 'WalletBooksClosed')
const amountOf = (e: RecordedEvent): number => (e.type === 'TokensReserved' ? -Number(e.data.amount) : e.type === 'TokensCaptured' ? 0 : Number(e.data.amount))
const typeOf = (e: RecordedEvent): string =>
  (({ TokensGranted: 'grant', TokensReserved: 'reservation', TokensCaptured: 'capture', TokensReleased: 'release' }) as Record<string, string>)[e.type]

/** Lexicographic order on `keys`, every key in the same direction; null first ascending. */
const orderBy =
  <T>(keys: Array<(x: T) => unknown>, dir: 'asc' | 'desc') =>
  (x: T, y: T): number => {
    for (const k of keys) {
      const c = cmp(k(x), k(y))
      if (c !== 0) return dir === 'asc' ? c : -c
    }
    return 0
  }

/** Every page of a list, walking offsets with `limit`, checking `total` on each page. */
async function walk(path: string, token: string, limit = 96): Promise<{ items: any[]; total: number }> {
  const items: any[] = []
  let total = -1
  for (let offset = 0; ; offset += limit) {
    const sep = path.includes('?') ? '&' : '?'
    const r = await api('GET', `${path}${sep}limit=${limit}&offset=${offset}`, { token })
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`)
    if (total !== -1 && r.body.total !== total) throw new Error(`${path}: total changed from ${total} to ${r.body.total}`)
    total = r.body.total
    if (r.body.limit !== limit || r.body.offset !== offset) throw new Error(`${path}: page echoed ${r.body.limit}/${r.body.offset}`)
    items.push(...r.body.items)
    if (r.body.items.length < limit) return { items, total }
  }
}

t.test('GET /api/jobs: every sort in both orders over every page', async t => {
  const sorts: Record<string, Array<(j: TestJob) => unknown>> = {
    created_at: [j => j.created_at, j => j.uuid],
    score: [j => j.score, j => j.created_at, j => j.uuid],
    status: [j => j.status, j => j.created_at, j => j.uuid],
    verdict: [j => j.verdict, j => j.created_at, j => j.uuid],
    uuid: [j => j.uuid]
  }
  for (const [sort, keys] of Object.entries(sorts)) {
    for (const order of ['asc', 'desc'] as const) {
      const { items, total } = await walk(`/api/jobs?sort=${sort}&order=${order}`, tokenA)
      t.equal(total, jobsA.length, `${sort} ${order}: total`)
      t.same(
        items.map(j => j.uuid),
        [...jobsA].sort(orderBy(keys, order)).map(j => j.uuid),
        `${sort} ${order}: order`
      )
    }
  }
  const byDefault = await api('GET', '/api/jobs', { token: tokenA })
  t.equal(byDefault.body.limit, 20, 'limit defaults to 20')
  t.equal(byDefault.body.offset, 0)
  t.same(
    byDefault.body.items.map((j: any) => j.uuid),
    [...jobsA]
      .sort(orderBy(sorts.created_at, 'desc'))
      .slice(0, 20)
      .map(j => j.uuid),
    'newest first by default'
  )
  t.equal((await api('GET', '/api/jobs?limit=1000', { token: tokenA })).body.limit, 96, 'a huge limit is lowered to 96 (all 7 here)')
  const beyond = await api('GET', '/api/jobs?offset=100000', { token: tokenA })
  t.same([beyond.body.items, beyond.body.total], [[], jobsA.length], 'an offset past the end: an empty page and the total')
})

t.test('GET /api/jobs: filters (status, verdict, from/to, search) alone and together', async t => {
  const check = async (query: string, keep: (j: TestJob) => boolean, label: string): Promise<void> => {
    const sort = pick(['created_at', 'score', 'status', 'verdict', 'uuid'] as const)
    const order = pick(['asc', 'desc'] as const)
    const keys: Record<string, Array<(j: TestJob) => unknown>> = {
      created_at: [j => j.created_at, j => j.uuid],
      score: [j => j.score, j => j.created_at, j => j.uuid],
      status: [j => j.status, j => j.created_at, j => j.uuid],
      verdict: [j => j.verdict, j => j.created_at, j => j.uuid],
      uuid: [j => j.uuid]
    }
    const { items, total } = await walk(`/api/jobs?${query}&sort=${sort}&order=${order}`, tokenA, pick([7, 50, 96]))
    const want = jobsA
      .filter(keep)
      .sort(orderBy(keys[sort], order))
      .map(j => j.uuid)
    t.equal(total, want.length, `${label}: total`)
    t.same(
      items.map(j => j.uuid),
      want,
      `${label} (${sort} ${order})`
    )
  }
  await check('status=completed', j => j.status === 'completed', 'one status')
  await check('status=queued,deferred', j => j.status === 'queued' || j.status === 'deferred', 'statuses OR-ed')
  await check('status=failed,%20completed', j => j.status === 'failed' || j.status === 'completed', 'spaces around commas')
  await check('verdict=valid', j => j.verdict === 'valid', 'one verdict')
  await check('verdict=risky,unknown,invalid', j => ['risky', 'unknown', 'invalid'].includes(j.verdict ?? ''), 'verdicts OR-ed')
  await check('status=completed,queued&verdict=valid', j => j.verdict === 'valid', 'status AND verdict')
  await check('status=queued&verdict=valid', () => false, 'a combination nothing matches')
  const times = jobsA.map(j => j.created_at).sort()
  for (let k = 0; k < 12; k++) {
    const [lo, hi] = [pick(times), pick(times)].sort()
    await check(`from=${lo}&to=${hi}`, j => j.created_at >= lo && j.created_at <= hi, `from ${lo} to ${hi}, both inclusive`)
  }
  for (let k = 0; k < 4; k++) {
    const a = iso(START + Math.floor(rnd() * (NOW - START)))
    await check(`from=${a}`, j => j.created_at >= a, `from ${a} alone`)
    await check(`to=${a}`, j => j.created_at <= a, `to ${a} alone`)
  }
  // An offset in the query names the same instant.
  const paris = `${ymd(SPRING)}T00:00:00.000+01:00`
  await check(
    `from=${encodeURIComponent(paris)}&to=${ymd(SPRING)}T23:59:59.999%2B02:00`,
    j => j.created_at >= iso(SPRING - HOUR) && j.created_at <= iso(SPRING + 22 * HOUR - 1),
    'a local day with offsets (23 hours)'
  )
  await check(`from=${times[100]}&to=${times[10]}`, () => false, 'from after to: nothing')
  await check(`from=${times[20]}&to=${times[20]}`, j => j.created_at === times[20], 'from equal to to: that instant')
  await check(
    `status=completed&verdict=valid,risky&from=${YEAR}-01-01T00:00:00Z&to=${YEAR}-06-30T23:59:59Z`,
    j => ['valid', 'risky'].includes(j.verdict ?? '') && j.created_at >= `${YEAR}-01-01T00:00:00.000Z` && j.created_at <= `${YEAR}-06-30T23:59:59.000Z`,
    'all filters together'
  )
  const target = pick(jobsA).uuid
  for (const n of [1, 2, 3, 8, 36]) {
    const prefix = target.slice(0, n)
    await check(`search=${prefix.toUpperCase()}`, j => j.uuid.startsWith(prefix), `search ${n} characters, upper-cased`)
  }
  await check(`search=${target.slice(0, 1)}&status=completed`, j => j.uuid.startsWith(target.slice(0, 1)) && j.status === 'completed', 'search with a filter')
  await check('search=', () => true, 'an empty search matches all')
  const other = jobs.find(j => j.owner === B)!
  await check(`search=${other.uuid}`, () => false, "another account's job is never listed")
})

t.test('GET /api/jobs: each environment apart (issue 42 item 10): a session chooses, a key sees its own', async t => {
  const keys: Record<string, Array<(j: TestJob) => unknown>> = {
    created_at: [j => j.created_at, j => j.uuid],
    score: [j => j.score, j => j.created_at, j => j.uuid],
    status: [j => j.status, j => j.created_at, j => j.uuid],
    verdict: [j => j.verdict, j => j.created_at, j => j.uuid],
    uuid: [j => j.uuid]
  }
  const liveKey = (await api('POST', '/api/keys', { token: tokenA, body: { name: 'live reader', environment: 'live', scopes: ['results:read'] } })).body
    .raw_key as string
  const check = async (query: string, token: string, keep: (j: TestJob) => boolean, label: string): Promise<void> => {
    const sort = pick(['created_at', 'score', 'status', 'verdict', 'uuid'] as const)
    const order = pick(['asc', 'desc'] as const)
    const { items, total } = await walk(`/api/jobs?${query}${query ? '&' : ''}sort=${sort}&order=${order}`, token, pick([7, 50, 96]))
    const want = jobsA
      .filter(keep)
      .sort(orderBy(keys[sort], order))
      .map(j => j.uuid)
    t.equal(total, want.length, `${label}: total`)
    t.same(
      items.map(j => j.uuid),
      want,
      `${label} (${sort} ${order})`
    )
  }
  const isTest = (j: TestJob): boolean => j.environment === 'test'
  const isLive = (j: TestJob): boolean => j.environment === 'live'
  t.ok(jobsA.some(isTest) && jobsA.some(isLive), `${jobsA.filter(isTest).length} sandbox and ${jobsA.filter(isLive).length} live jobs`)
  for (let k = 0; k < 3; k++) {
    await check('environment=test', tokenA, isTest, 'a session naming test')
    await check('environment=live', tokenA, isLive, 'a session naming live')
    await check('', sandboxKey, isTest, 'a test key')
    await check('', liveKey, isLive, 'a live key')
  }
  await check('environment=test&status=completed', tokenA, j => isTest(j) && j.status === 'completed', 'environment and status')
  await check('environment=live&verdict=valid,risky', tokenA, j => isLive(j) && ['valid', 'risky'].includes(j.verdict ?? ''), 'environment and verdict')
  const times = jobsA.map(j => j.created_at).sort()
  const [lo, hi] = [times[30], times[140]]
  await check(`from=${lo}&to=${hi}`, sandboxKey, j => isTest(j) && j.created_at >= lo && j.created_at <= hi, 'a test key, a range of days')
  await check('environment=test&status=failed', sandboxKey, j => isTest(j) && j.status === 'failed', 'a test key naming its own environment')
  const probe = jobsA.find(isLive)!
  await check(`search=${probe.uuid}`, sandboxKey, () => false, 'a live job is never listed to a test key')
  for (const [token, other] of [
    [sandboxKey, 'live'],
    [liveKey, 'test']
  ] as const) {
    const r = await api('GET', `/api/jobs?environment=${other}`, { token })
    t.same([r.status, r.body.code], [400, 'list_jobs.other_environment'], `a ${other === 'live' ? 'test' : 'live'} key naming ${other}: 400`)
  }
  t.equal((await api('GET', `/api/jobs/${probe.uuid}`, { token: sandboxKey })).status, 404, "a live job is not found by a test key (as another account's)")
  t.equal((await api('GET', `/api/verify/${probe.uuid}`, { token: sandboxKey })).status, 404, 'nor by its verify read')
  t.equal((await api('GET', `/api/jobs/${probe.uuid}`, { token: liveKey })).status, 200, 'the live key reads it (positive control)')
  const sandboxJob = jobsA.find(isTest)!
  t.equal((await api('GET', `/api/jobs/${sandboxJob.uuid}`, { token: liveKey })).status, 404, 'a sandbox job is not found by a live key')
  t.match((await api('GET', `/api/jobs/${sandboxJob.uuid}`, { token: tokenA })).body, { environment: 'test' }, 'a session reads both, each marked')
  t.match((await api('GET', `/api/jobs/${sandboxJob.uuid}`, { token: sandboxKey })).body, { uuid: sandboxJob.uuid, environment: 'test' })
})

t.test('GET /api/jobs: every invalid parameter is a 400 problem; credentials', async t => {
  const bad = [
    'environment=staging',
    'status=done',
    'status=',
    'status=,',
    'status=completed,,nope',
    'verdict=great',
    'verdict=valid,Valid',
    'sort=email',
    'sort=',
    'order=up',
    'order=DESC',
    'from=yesterday',
    'from=2027-02-30T00:00:00Z',
    'to=2027-13-01T00:00:00Z',
    'to=2027-01-01',
    'from=2027-01-01T10:00:00',
    'limit=0',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'offset=-1',
    'offset=1e3',
    'offset=1234567890',
    'search=xyz',
    `search=${'a'.repeat(37)}`,
    'search=%25'
  ]
  for (const q of bad) {
    const r = await api('GET', `/api/jobs?${q}`, { token: tokenA })
    t.equal(r.status, 400, `${q}: 400`)
    t.equal(r.headers.get('content-type')?.split(';')[0], 'application/problem+json', `${q}: problem+json`)
    t.equal(r.body.code, 'list_jobs.invalid_query', `${q}: code`)
    t.ok(Array.isArray(r.body.errors) && r.body.errors.length > 0, `${q}: names the field`)
  }
  t.equal((await api('GET', '/api/jobs')).status, 401, 'no credential: 401')
  t.equal((await api('GET', '/api/jobs', { token: 'svc_nope' })).status, 401, 'an unknown key: 401')
  const narrow = await api('POST', '/api/keys', { token: tokenA, body: { name: 'verify only', environment: 'live', scopes: ['email:verify:single'] } })
  t.equal(narrow.status, 201)
  const r = await api('GET', '/api/jobs', { token: narrow.body.raw_key })
  t.equal(r.status, 403, 'a key without results:read: 403')
  const wide = await api('POST', '/api/keys', { token: tokenA, body: { name: 'reader', environment: 'live', scopes: ['results:read'] } })
  t.equal(
    (await api('GET', '/api/jobs?limit=1', { token: wide.body.raw_key })).body.total,
    jobsA.filter(j => j.environment === 'live').length,
    "a live key with results:read lists the account's live jobs"
  )
})

t.test('GET /api/jobs/{uuid}: per-check detail, the address unsealed; errors', async t => {
  const j = jobsA.find(x => x.status === 'completed')!
  const r = await api('GET', `/api/jobs/${j.uuid.toUpperCase()}`, { token: tokenA })
  t.equal(r.status, 200)
  t.match(r.body, {
    uuid: j.uuid,
    status: 'completed',
    email: j.email,
    verdict: j.verdict,
    reason: j.reason,
    score: j.score,
    created_at: j.created_at,
    completed_at: j.done_at
  })
  t.same(
    r.body.result.checks.map((c: any) => [c.name, c.outcome]),
    j.checks.map(c => [c.name, c.outcome]),
    'every check with its outcome'
  )
  t.equal(r.body.result.normalized, j.email)
  const d = jobsA.find(x => x.status === 'deferred')!
  t.match((await api('GET', `/api/jobs/${d.uuid}`, { token: tokenA })).body, { status: 'deferred', attempts: 1, result: null })
  const other = jobs.find(x => x.owner === B)!
  t.equal((await api('GET', `/api/jobs/${other.uuid}`, { token: tokenA })).status, 404, "another account's job: 404")
  t.equal((await api('GET', `/api/jobs/${randomUUID()}`, { token: tokenA })).status, 404, 'an unknown job: 404')
  const malformed = await api('GET', '/api/jobs/not-a-uuid', { token: tokenA })
  t.same([malformed.status, malformed.body.code], [400, 'request.invalid_uuid'])
  t.equal((await api('GET', `/api/jobs/${j.uuid}`)).status, 401)
})

t.test('GET /api/wallet/transactions: the ledger, every sort in both orders', async t => {
  const balanceAfter = new Map<string, number>()
  let balance = 0
  for (const e of ledgerA) {
    balance += amountOf(e)
    balanceAfter.set(e.id, balance)
  }
  const want = ledgerA.map(e => ({
    seq: e.revision,
    uuid: e.id,
    occurred_at: e.metadata.occurred_at,
    amount: amountOf(e),
    transaction_type: typeOf(e),
    job_uuid: (e.data.job_uuid as string | undefined) ?? null,
    balance_after: balanceAfter.get(e.id)
  }))
  const sorts: Record<string, Array<(x: (typeof want)[number]) => unknown>> = {
    occurred_at: [x => x.occurred_at, x => x.seq],
    amount: [x => x.amount, x => x.occurred_at, x => x.seq],
    transaction_type: [x => x.transaction_type, x => x.occurred_at, x => x.seq]
  }
  for (const [sort, keys] of Object.entries(sorts)) {
    for (const order of ['asc', 'desc'] as const) {
      const { items, total } = await walk(`/api/wallet/transactions?sort=${sort}&order=${order}`, tokenA)
      t.equal(total, want.length, `${sort} ${order}: total`)
      t.same(
        items.map(x => x.uuid),
        [...want].sort(orderBy(keys, order)).map(x => x.uuid),
        `${sort} ${order}: order`
      )
      // In time order, not the ledger's: the real grant at sign-up may fall inside the seeded window.
      if (sort === 'occurred_at' && order === 'asc')
        t.match(
          items,
          [...want].sort(orderBy(keys, order)).map(({ seq: _, ...x }) => x),
          'each entry: time, signed amount, type, job and the balance after it'
        )
    }
  }
  const first = await api('GET', '/api/wallet/transactions?limit=3', { token: tokenA })
  t.same(
    first.body.items.map((x: any) => x.uuid),
    [...want]
      .sort(orderBy(sorts.occurred_at, 'desc'))
      .slice(0, 3)
      .map(x => x.uuid),
    'newest first by default'
  )
  const w = (await api('GET', '/api/wallet', { token: tokenA })).body
  t.equal(w.balance, balance, "the wallet shows the ledger's balance")
})

t.test('GET /api/wallet/transactions/grouped: by job, newest group first', async t => {
  const groups = new Map<string, { key: string; first: string; seq: number; amount: number; uuids: string[]; type: string }>()
  for (const e of ledgerA) {
    const key = (e.data.job_uuid as string | undefined) ?? e.id
    const g = groups.get(key) ?? { key, first: e.metadata.occurred_at, seq: e.revision, amount: 0, uuids: [], type: typeOf(e) }
    g.amount += amountOf(e)
    g.uuids.push(e.id)
    groups.set(key, g)
  }
  const all = [...groups.values()]
  const groupId = (x: any): string => x.job_uuid ?? x.transactions[0].uuid
  const sorts: Record<string, Array<(x: (typeof all)[number]) => unknown>> = {
    occurred_at: [x => x.first, x => x.seq],
    amount: [x => x.amount, x => x.first, x => x.seq],
    transaction_type: [x => x.type, x => x.first, x => x.seq]
  }
  for (const [sort, keys] of Object.entries(sorts)) {
    for (const order of ['asc', 'desc'] as const) {
      const { items, total } = await walk(`/api/wallet/transactions/grouped?sort=${sort}&order=${order}`, tokenA, 50)
      t.equal(total, all.length, `${sort} ${order}: total`)
      t.same(
        items.map(groupId),
        [...all].sort(orderBy(keys, order)).map(x => x.key),
        `${sort} ${order}: order (ties in ledger order)`
      )
      t.same(
        items.map(x => x.amount),
        [...all].sort(orderBy(keys, order)).map(x => x.amount),
        `${sort} ${order}: net amounts`
      )
      if (sort === 'occurred_at')
        for (const x of items)
          if (JSON.stringify(x.transactions.map((tx: any) => tx.uuid)) !== JSON.stringify(groups.get(groupId(x))!.uuids))
            t.fail(`group ${groupId(x)} holds other transactions`)
    }
  }
  const top = await api('GET', '/api/wallet/transactions/grouped?limit=1', { token: tokenA })
  t.equal(top.body.items[0].occurred_at, [...all].sort((x, y) => cmp(y.first, x.first))[0].first, 'the newest group first by default')
})

t.test('wallet reads: invalid parameters and credentials', async t => {
  for (const path of ['/api/wallet/transactions', '/api/wallet/transactions/grouped']) {
    for (const q of ['sort=job', 'order=sideways', 'limit=0', 'offset=x']) {
      const r = await api('GET', `${path}?${q}`, { token: tokenA })
      t.same([r.status, r.body.code], [400, 'list_transactions.invalid_query'], `${path}?${q}`)
    }
    t.equal((await api('GET', path)).status, 401)
  }
  for (const q of ['granularity=year', 'granularity=', 'days=-1', 'days=1.5', 'days=x', 'days=2147483648', 'time_zone=Mars/Olympus', 'time_zone=']) {
    const r = await api('GET', `/api/wallet/balance-history?${q}`, { token: tokenA })
    t.same([r.status, r.body.code], [400, 'balance_history.invalid_query'], `balance-history?${q}`)
    const s = await api('GET', `/api/stats/overview?${q}`, { token: tokenA })
    t.same([s.status, s.body.code], [400, 'stats_overview.invalid_query'], `stats/overview?${q}`)
  }
  const noBilling = await api('POST', '/api/keys', { token: tokenA, body: { name: 'no billing', environment: 'live', scopes: ['results:read'] } })
  for (const path of ['/api/wallet', '/api/wallet/balance-history', '/api/wallet/transactions', '/api/wallet/transactions/grouped']) {
    t.equal((await api('GET', path, { token: noBilling.body.raw_key })).status, 403, `${path}: a key without billing:read`)
  }
  t.equal((await api('GET', '/api/stats/overview', { token: noBilling.body.raw_key })).status, 403, 'stats/overview: a key without usage:read')
  t.equal((await api('GET', '/api/stats/overview')).status, 401)
})

/** The local wall-clock time of an instant in a zone (Intl: an oracle independent of luxon). */
const local = (ms: number, tz: string): string =>
  new Intl.DateTimeFormat('en-CA', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    weekday: 'short'
  }).format(new Date(ms))

t.test("balance-history and stats/overview: buckets at every granularity, in UTC and across Paris's changes of time", async t => {
  service.core.ctx.now = () => new Date(NOW)
  t.teardown(() => {
    service.core.ctx.now = realNow
  })
  const cases: Array<[string, string, number, number]> = [
    // granularity, zone, days, buckets expected (docs/interface.md §8)
    ['day', 'UTC', 8, 8],
    ['hour', 'UTC', 1, 24],
    ['month', 'UTC', 364, 12],
    ['week', 'UTC', 28, 4],
    ['day', 'UTC', 0, 1],
    ['day', 'UTC', 5000, 364],
    ['day', 'Europe/Paris', 364, 364],
    ['week', 'Europe/Paris', 364, 52],
    ['month', 'Europe/Paris', 364, 12],
    ['hour', 'Europe/Paris', 2, 48],
    ['day', 'America/New_York', 40, 40],
    // Offsets of half and three quarters of an hour: the overview reads 15-minute slots, not hours.
    ['day', 'Asia/Kolkata', 60, 60],
    ['month', 'Asia/Kathmandu', 364, 12],
    ['hour', 'Asia/Kolkata', 2, 48]
  ]
  const completed = jobsA.filter(j => j.status === 'completed')
  for (const [granularity, tz, days, n] of cases) {
    const q = `granularity=${granularity}&days=${days}${tz === 'UTC' ? '' : `&time_zone=${tz}`}`
    const h = await api('GET', `/api/wallet/balance-history?${q}`, { token: tokenA })
    t.equal(h.status, 200, q)
    const series = h.body.series as Array<{ start: string; end: string; balance: number }>
    t.equal(series.length, n, `${q}: ${n} buckets`)
    t.same([h.body.granularity, h.body.days, h.body.time_zone], [granularity, Math.min(364, Math.max(1, days)), tz])
    const last = series[series.length - 1]
    t.ok(Date.parse(last.start) <= NOW && NOW < Date.parse(last.end), `${q}: the last bucket is open around now`)
    let ok = true
    for (let i = 0; i < series.length; i++) {
      const b = series[i]
      if (i > 0 && series[i - 1].end !== b.start) ok = false
      const s = local(Date.parse(b.start), tz)
      // Each bucket begins at a local boundary: a whole hour, a midnight, a Monday midnight, the 1st at midnight.
      if (!s.endsWith(granularity === 'hour' ? ':00' : '00:00')) ok = false
      if (granularity === 'week' && !s.startsWith('Mon')) ok = false
      if (granularity === 'month' && !/-01,/.test(s)) ok = false
      const balance = ledgerA.filter(e => Date.parse(e.metadata.occurred_at) < Date.parse(b.end)).reduce((x, e) => x + amountOf(e), 0)
      if (b.balance !== balance) {
        ok = false
        t.fail(`${q}: bucket ${b.start} shows ${b.balance}, the ledger makes ${balance}`)
      }
    }
    t.ok(ok, `${q}: contiguous, on local boundaries, the ledger's balance at each end`)
    if (tz === 'Europe/Paris' && granularity === 'day') {
      const hours = series.map(b => (Date.parse(b.end) - Date.parse(b.start)) / 3_600_000)
      t.same([hours.filter(x => x === 23).length, hours.filter(x => x === 25).length], [1, 1], 'one day of 23 hours and one of 25')
    }

    const o = await api('GET', `/api/stats/overview?${q}`, { token: tokenA })
    t.equal(o.status, 200)
    t.equal(o.body.series.length, n)
    const inB = (at: string | null, b: { start: string; end: string }): boolean => at !== null && at >= b.start && at < b.end
    const window = { start: series[0].start, end: last.end }
    let seriesOk = true
    for (const [i, b] of (o.body.series as any[]).entries()) {
      if (b.start !== series[i].start || b.end !== series[i].end) seriesOk = false
      const want = {
        submitted: jobsA.filter(j => inB(j.created_at, b)).length,
        completed: completed.filter(j => inB(j.done_at, b)).length,
        failed: jobsA.filter(j => j.status === 'failed' && inB(j.done_at, b)).length,
        tokens_spent: completed.filter(j => inB(j.done_at, b)).reduce((x, j) => x + j.charge, 0)
      }
      for (const [k, v] of Object.entries(want))
        if (b[k] !== v) {
          seriesOk = false
          t.fail(`${q}: bucket ${b.start} ${k} ${b[k]}, the events make ${v}`)
        }
      for (const v of ['valid', 'invalid', 'risky', 'unknown'])
        if (b.verdicts[v] !== completed.filter(j => j.verdict === v && inB(j.done_at, b)).length) seriesOk = false
    }
    t.ok(seriesOk, `${q}: activity per bucket`)
    const inWindow = completed.filter(j => inB(j.done_at, window))
    t.same(
      o.body.totals,
      {
        submitted: jobsA.filter(j => inB(j.created_at, window)).length,
        completed: inWindow.length,
        failed: jobsA.filter(j => j.status === 'failed' && inB(j.done_at, window)).length,
        tokens_spent: inWindow.reduce((x, j) => x + j.charge, 0)
      },
      `${q}: totals`
    )
    const count = (xs: string[]): Record<string, number> => xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {})
    t.same(o.body.verdicts, { valid: 0, invalid: 0, risky: 0, unknown: 0, ...count(inWindow.map(j => j.verdict!)) }, `${q}: verdicts`)
    t.same(o.body.reasons, count(inWindow.map(j => j.reason!)), `${q}: reasons`)
    t.same(o.body.checks, count(inWindow.flatMap(j => j.checks.filter(c => c.outcome !== 'skipped').map(c => c.name))), `${q}: checks that ran`)
  }
  const dflt = await api('GET', '/api/stats/overview', { token: tokenA })
  t.same([dflt.body.granularity, dflt.body.days, dflt.body.time_zone, dflt.body.series.length], ['day', 28, 'UTC', 28], 'defaults: day, 28 days, UTC')
  t.equal(dflt.body.environment, null, "a session's overview adds both environments up")
  // Each environment's usage apart (issue 42 item 10): a session names one, a key reads its own.
  const year = 'granularity=month&days=364'
  const whole = (await api('GET', `/api/stats/overview?${year}`, { token: tokenA })).body.series as Array<{ start: string; end: string }>
  const span = { start: whole[0].start, end: whole[whole.length - 1].end }
  const inSpan = (at: string | null): boolean => at !== null && at >= span.start && at < span.end
  for (const [environment, token, query] of [
    ['test', tokenA, `${year}&environment=test`],
    ['live', tokenA, `${year}&environment=live`],
    ['test', sandboxKey, year]
  ] as const) {
    const own = jobsA.filter(j => j.environment === environment)
    const o = await api('GET', `/api/stats/overview?${query}`, { token })
    t.equal(o.body.environment, environment)
    t.same(
      o.body.totals,
      {
        submitted: own.filter(j => inSpan(j.created_at)).length,
        completed: own.filter(j => j.status === 'completed' && inSpan(j.done_at)).length,
        failed: own.filter(j => j.status === 'failed' && inSpan(j.done_at)).length,
        tokens_spent: own.filter(j => j.status === 'completed' && inSpan(j.done_at)).reduce((x, j) => x + j.charge, 0)
      },
      `${environment} usage (${token === tokenA ? 'a session naming it' : 'a test key'})`
    )
  }
  const other = await api('GET', '/api/stats/overview?environment=live', { token: sandboxKey })
  t.same([other.status, other.body.code], [400, 'stats_overview.other_environment'], 'a test key naming live: 400')
  const b = await api('GET', '/api/stats/overview?granularity=month&days=364', { token: tokenB })
  t.equal(b.body.totals.submitted, jobs.filter(j => j.owner === B).length, 'each account sees its own usage')
})

t.test('GET /api/stats/summary: all accounts, all time, nothing personal, no credential', async t => {
  const r = await api('GET', '/api/stats/summary')
  t.equal(r.status, 200)
  const completed = jobs.filter(j => j.status === 'completed' && j.environment === 'live')
  const count = (xs: string[]): Record<string, number> => xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {})
  t.same(r.body, {
    verifications: completed.length,
    by_verdict: count(completed.map(j => j.verdict!)),
    by_reason: count(completed.map(j => j.reason!)),
    checks_run: completed.reduce((n, j) => n + j.checks.filter(c => c.outcome !== 'skipped').length, 0),
    since: completed.map(j => j.done_at!).sort()[0],
    updated_at: completed
      .map(j => j.done_at!)
      .sort()
      .at(-1)
  })
  t.notMatch(JSON.stringify(r.body), /@|[0-9a-f]{8}-[0-9a-f]{4}/, 'no address, no uuid')
})

t.test('notifications: the feed by cursor, the seen mark, every error', async t => {
  const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0'
  t.equal((await api('POST', '/api/keys', { token: tokenB, body: { name: 'first', environment: 'live' } })).status, 201)
  t.equal((await api('POST', '/api/keys', { token: tokenB, body: { name: 'second', environment: 'live' } })).status, 201)
  const ag = await api('POST', '/api/agents', { token: tokenB, body: { name: 'helper', scopes: ['results:read'] } })
  t.equal(ag.status, 201)
  const temp = await api('POST', '/api/agents', { token: tokenB, body: { name: 'temp', scopes: ['results:read'] } })
  t.equal((await api('DELETE', `/api/agents/${temp.body.uuid}`, { token: tokenB })).status, 200)
  const login = await api('POST', '/api/auth/login', {
    body: { email: 'bob@example.com', password: 'correct horse battery staple' },
    headers: { 'user-agent': firefox }
  })
  t.equal(login.status, 200)
  await api('POST', '/api/auth/login', { body: { email: 'bob@example.com', password: 'correct horse battery staple' }, headers: { 'user-agent': firefox } })
  const granted = (await api('GET', '/api/wallet', { token: tokenB })).body.balance as number
  const w = await store.readStream(`wallet-${B}`)
  const low = await store.append(
    `wallet-${B}`,
    [
      event(
        'TokensReserved',
        { user_uuid: B, job_uuid: randomUUID(), reservation_uuid: randomUUID(), amount: granted - 5, reserved_at: new Date().toISOString() },
        new Date().toISOString()
      )
    ],
    { expected_revision: w.length - 1 }
  )
  t.ok(await service.runner!.waitFor(low.position))
  const token = login.body.access_token as string

  const expected = [
    ['balance_low', /5 tokens left/],
    ['new_client_sign_in', /Firefox on Linux/],
    ['agent_revoked', /revoked/],
    ['agent_created', /temp/],
    ['agent_created', /helper/],
    ['api_key_created', /second/],
    ['api_key_created', /first/]
  ] as const
  const all = await api('GET', '/api/notifications', { token })
  t.equal(all.status, 200)
  t.same(
    all.body.items.map((n: any) => n.kind),
    expected.map(e => e[0]),
    'newest first; a second sign-in from the same client is not news; nor was the first client'
  )
  for (const [i, [, message]] of expected.entries()) t.match(all.body.items[i].message, message)
  t.same([all.body.next_cursor, all.body.seen_up_to], [null, null], 'one page; nothing seen yet')
  t.ok(all.body.items.every((n: any) => n.seen === false))
  t.match(all.body.items[0].data, { balance: 5 })

  const pages: string[][] = []
  let cursor: string | null = null
  do {
    const r: any = await api('GET', `/api/notifications?limit=4${cursor ? `&cursor=${cursor}` : ''}`, { token })
    t.equal(r.status, 200)
    pages.push(r.body.items.map((n: any) => n.cursor))
    cursor = r.body.next_cursor
  } while (cursor !== null)
  t.same(pages, [all.body.items.slice(0, 4).map((n: any) => n.cursor), all.body.items.slice(4).map((n: any) => n.cursor)], 'pages of 4 then 3, then no cursor')
  const exact = await api('GET', '/api/notifications?limit=7', { token })
  t.same([exact.body.items.length, exact.body.next_cursor], [7, null], 'a last page that is exactly full has no next cursor')
  const six = await api('GET', '/api/notifications?limit=6', { token })
  const rest = await api('GET', `/api/notifications?limit=6&cursor=${six.body.next_cursor}`, { token })
  t.same(
    [rest.body.items.map((n: any) => n.cursor), rest.body.next_cursor],
    [[all.body.items[6].cursor], null],
    'the page after a cursor starts after its entry'
  )
  t.equal((await api('GET', '/api/notifications?limit=0', { token })).body.items.length, 1, 'limit 0 is raised to 1')
  t.equal((await api('GET', '/api/notifications?limit=-7', { token })).body.items.length, 1, 'a negative limit is raised to 1')
  t.equal((await api('GET', '/api/notifications?limit=100000', { token })).body.items.length, 7, 'a huge limit is lowered to 96 (all 7 here)')

  const seen = await api('POST', '/api/notifications/seen', { token, body: { up_to: all.body.items[2].cursor } })
  t.same([seen.status, seen.body], [200, { seen_up_to: all.body.items[2].cursor }], 'answers the cursor in effect')
  const after = await api('GET', '/api/notifications', { token })
  t.same(
    after.body.items.map((n: any) => n.seen),
    [false, false, true, true, true, true, true],
    'that entry and every older one are seen'
  )
  t.equal(after.body.seen_up_to, all.body.items[2].cursor)
  const back = await api('POST', '/api/notifications/seen', { token, body: { up_to: all.body.items[5].cursor } })
  t.same(back.body, { seen_up_to: all.body.items[2].cursor }, 'the mark never moves back')
  const newest = await api('POST', '/api/notifications/seen', { token, body: { up_to: all.body.items[0].cursor } })
  t.same(newest.body, { seen_up_to: all.body.items[0].cursor })

  const garbage = Buffer.from('x:12').toString('base64url')
  for (const c of ['zzz!', garbage, Buffer.from('n:-1').toString('base64url'), Buffer.from('n:1e3').toString('base64url'), 'a'.repeat(41)]) {
    const r = await api('GET', `/api/notifications?cursor=${encodeURIComponent(c)}`, { token })
    t.same([r.status, r.body.code], [400, 'notifications.invalid_query'], `cursor ${c}: 400`)
    const s = await api('POST', '/api/notifications/seen', { token, body: { up_to: c } })
    t.equal(s.status, 400, `seen ${c}: 400`)
  }
  t.equal((await api('GET', '/api/notifications?limit=ten', { token })).status, 400, 'a limit that is not a number')
  for (const body of [undefined, {}, { up_to: 12 }, { up_to: all.body.items[0].cursor, extra: 1 }]) {
    const r = await api('POST', '/api/notifications/seen', { token, body })
    t.equal(r.status, 400, `seen ${JSON.stringify(body)}: 400`)
  }
  t.equal((await api('POST', '/api/notifications/seen', { token, raw: '{"up_to":' })).status, 400, 'malformed JSON: 400')
  const fromA = (await api('GET', '/api/notifications', { token: tokenA })).body.items[0]
  t.ok(fromA, 'A has a feed too (its keys)')
  const foreign = await api('POST', '/api/notifications/seen', { token, body: { up_to: fromA.cursor } })
  t.same([foreign.status, foreign.body.code], [400, 'notifications_seen.unknown_cursor'], "a cursor of another account's feed")
  t.equal((await api('GET', '/api/notifications')).status, 401)
  const key = await api('POST', '/api/keys', { token: tokenB, body: { name: 'third', environment: 'live' } })
  t.equal((await api('GET', '/api/notifications', { token: key.body.raw_key })).status, 401, 'an API key: 401 (session only)')
  t.equal(
    (await api('POST', '/api/notifications/seen', { token: ag.body.token, body: { up_to: all.body.items[0].cursor } })).status,
    401,
    'an agent token: 401'
  )
  t.equal((await api('GET', '/api/notifications', { token: temp.body.token })).status, 401, 'a revoked agent token: 401')
})

t.test('no answer broke its declared schema', async t => {
  t.same(responseViolations, [])
})
