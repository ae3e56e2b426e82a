// Benchmark: the read side at a realistic size, measured in one run on the embedded
// default (SQLite event store and read store in DATA_DIR).
//  1. An account with 1,000,000 jobs (4 events each: reserved, queued, completed,
//     captured; about 4,000,000 events), a year of history with every status and verdict.
//  2. Rebuild rate: `rebuildProjections` of every projection from the first event, in
//     events per second, as a share of a raw read of the same event store (goal ≥ 60%);
//     and SQLite's own cost of writing the rows it made (pre-serialized, no fold), the
//     bound on any rebuild into this store, as the same share.
//  3. Start-up: `svc serve` in a fresh process on that DATA_DIR, from spawn to /readyz 200
//     (goal < 5 s), and its resident memory then (goal < 300 MiB); the same on an empty
//     DATA_DIR for comparison.
//  4. GET /api/jobs on that account through HTTP (an API key), with filters and sorts,
//     p50 and p99 over every query (goal p99 < 50 ms), and per query shape.
//  5. The wallet and statistics reads over windows up to a year on it (no goal).
// Usage: node bench/read-side.ts [--jobs 1000000] [--requests 100] [--keep] [--json]
//        node bench/read-side.ts --data-dir <a DATA_DIR kept by --keep> [--requests 100] [--json]
//          (measures 2–4 again on it, without seeding; the directory is left in place)
import { mkdtempSync, rmSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { parseArgs } from 'node:util'
import { DatabaseSync, type SQLInputValue } from 'node:sqlite'
import { v7 as uuidv7 } from 'uuid'
import { loadConfig } from '../src/config.ts'
import type { Reason } from '../src/verifier/result.ts'
import { openCore } from '../src/core.ts'
import * as wallet from '../src/domain/wallet/decider.ts'
import type { WalletEvent } from '../src/domain/wallet/events.ts'
import { CHECK_NAMES } from '../src/domain/checks.ts'
import { simulate } from '../src/verifier/sandbox.ts'
import type { EventStore, NewEvent } from '../src/ports/event-store.ts'
import { PROJECTIONS } from '../src/projections/index.ts'
import { foldHistory, rebuildProjections } from '../src/eventsourcing/rebuild.ts'
import type { ReadStore } from '../src/ports/read-store.ts'
import { unlimitedRates } from '../test/support/plans.ts'
import { client, signUp, startTestService, testConfig } from '../test/support/service.ts'

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '100' },
    /** Leave the seeded DATA_DIR in place (its path goes to stderr), to profile against it. */
    keep: { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
    json: { type: 'boolean', default: false }
  }
})
let JOBS = Number(args.jobs)
const REQUESTS = Number(args.requests)
const log = (msg: string): void => {
  process.stderr.write(`${msg}\n`)
}
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const r2 = (x: number): number => Math.round(x * 100) / 100
const cli = new URL('../src/cli.ts', import.meta.url).pathname
const DAY = 86_400_000

const reuse = args['data-dir']
const dir = reuse ?? mkdtempSync(join(tmpdir(), 'bench-read-'))
const emptyDir = mkdtempSync(join(tmpdir(), 'bench-read-empty-'))

// ── 1. An account through the API, then a year of jobs as the service would have written them ──

log(reuse ? `read side: signing in to the account kept in ${reuse}…` : 'read side: signing an account up…')
let owner: string
let apiKey: string
{
  const service = await startTestService(testConfig(dir, unlimitedRates(dir)))
  const api = client(service.url)
  const email = 'million@example.com'
  const password = 'correct horse battery staple'
  const token = reuse
    ? ((await api('POST', '/api/auth/login', { body: { email, password } })).body.access_token as string)
    : await signUp(api, dir, email, password)
  if (typeof token !== 'string') throw new Error(`read side: could not sign in to the account in ${dir}`)
  owner = (await api('GET', '/api/users/me', { token })).body.uuid
  // A kept store is used again and again: the keys earlier runs made go first (the plan allows a few).
  if (reuse)
    for (const k of (await api('GET', '/api/keys', { token })).body as Array<{ uuid: string; name: string }>) {
      if (k.name === 'bench') await api('DELETE', `/api/keys/${k.uuid}`, { token })
    }
  const key = await api('POST', '/api/keys', { token, body: { name: 'bench', environment: 'live' } })
  if (key.status !== 201) throw new Error(`read side: POST /api/keys answered ${key.status}: ${JSON.stringify(key.body)}`)
  apiKey = key.body.raw_key
  if (reuse) JOBS = (await api('GET', '/api/jobs?limit=1', { token })).body.total
  await service.close()
}

const VERDICTS = ['valid', 'valid', 'valid', 'invalid', 'risky', 'unknown'] as const
// Typed by the vocabulary: a reason the interface does not know (`catch_all` once) answers 500 at the response's schema.
const REASON: Record<(typeof VERDICTS)[number], Reason> = { valid: 'accepted_email', invalid: 'rejected_email', risky: 'accept_all', unknown: 'timeout' }

/**
 * `jobs` jobs of `owner` over the last 365 days, oldest first: each reserved on the
 * wallet (the wallet decider decides, the books closed every CLOSE_BOOKS_EVERY events as
 * `handle` does), queued, completed with a verdict (1 in 200 failed, 1 in 500 still
 * queued) and captured or released.
 */
async function seed(store: EventStore, jobs: number, sealedEmail: string): Promise<void> {
  const stream = `wallet-${owner}`
  const existing = await store.readStream(stream)
  let state = existing.reduce((s, e) => wallet.evolve(s, { type: e.type, data: e.data } as WalletEvent), wallet.initialState())
  let revision = existing.length - 1
  let since = existing.length
  let pending: NewEvent[] = []
  const start = Date.now() - 365 * DAY
  const step = (365 * DAY) / jobs
  const templates = Object.fromEntries(
    ['valid', 'invalid', 'risky', 'unknown'].map(v => [v, simulate(`${v === 'invalid' ? 'nobody' : 'someone'}@example.com`, CHECK_NAMES, new Date())])
  )
  const push = (e: WalletEvent, at: string): void => {
    pending.push({
      id: uuidv7(),
      type: e.type,
      data: e.data as unknown as Record<string, unknown>,
      metadata: { occurred_at: at, actor: owner, correlation_id: null, causation_id: null }
    })
    state = wallet.evolve(state, e)
    since = e.type === 'WalletBooksClosed' ? 0 : since + 1
  }
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return
    revision = (await store.append(stream, pending, { expected_revision: revision })).next_expected_revision
    pending = []
  }
  const now0 = new Date(start).toISOString()
  wallet
    .decide(
      { type: 'GrantTokens', data: { user_uuid: owner, grant_uuid: 'seed', amount: 10 * jobs, source: 'operator', plan: null, reason: 'bench', now: now0 } },
      state
    )
    .forEach(e => {
      push(e, now0)
    })
  const t0 = performance.now()
  for (let i = 0; i < jobs; i++) {
    const createdMs = Math.floor(start + i * step)
    const at = new Date(createdMs).toISOString()
    const doneAt = new Date(createdMs + 2_000).toISOString()
    const job = uuidv7({ msecs: createdMs })
    const r = randomUUID()
    const meta = { occurred_at: at, actor: owner, correlation_id: null, causation_id: null }
    wallet
      .decide(
        {
          type: 'ReserveTokens',
          data: {
            user_uuid: owner,
            job_uuid: job,
            reservation_uuid: r,
            amount: 10,
            job: { email: sealedEmail, checks: [...CHECK_NAMES], key_uuid: null, queued_at: at },
            now: at
          }
        },
        state
      )
      .forEach(e => {
        push(e, at)
      })
    const events: NewEvent[] = [
      {
        id: uuidv7(),
        type: 'JobQueued',
        data: {
          job_uuid: job,
          user_uuid: owner,
          email: sealedEmail,
          checks: [...CHECK_NAMES],
          cost: 10,
          environment: 'live',
          key_uuid: null,
          reservation_uuid: r,
          queued_at: at
        },
        metadata: meta
      }
    ]
    if (i % 500 !== 7) {
      if (i % 200 === 3) {
        events.push({
          id: uuidv7(),
          type: 'JobFailed',
          data: { job_uuid: job, user_uuid: owner, error: 'engine error', failed_at: doneAt },
          metadata: { ...meta, occurred_at: doneAt }
        })
        wallet
          .decide({ type: 'ReleaseTokens', data: { user_uuid: owner, job_uuid: job, reservation_uuid: r, reason: 'job_failed', now: doneAt } }, state)
          .forEach(e => {
            push(e, doneAt)
          })
      } else {
        const verdict = VERDICTS[i % VERDICTS.length]
        const result = templates[verdict]
        const score = (i * 37) % 101
        events.push({
          id: uuidv7(),
          type: 'JobCompleted',
          data: {
            job_uuid: job,
            user_uuid: owner,
            verdict,
            reason: REASON[verdict],
            score,
            charge: verdict === 'unknown' ? 0 : 10,
            result: { ...result, verdict, reason: REASON[verdict], score, email: undefined, normalized: sealedEmail, checked_at: doneAt },
            completed_at: doneAt
          },
          metadata: { ...meta, occurred_at: doneAt }
        })
        if (verdict === 'unknown')
          wallet
            .decide({ type: 'ReleaseTokens', data: { user_uuid: owner, job_uuid: job, reservation_uuid: r, reason: 'unknown_verdict', now: doneAt } }, state)
            .forEach(e => {
              push(e, doneAt)
            })
        else
          wallet
            .decide({ type: 'CaptureTokens', data: { user_uuid: owner, job_uuid: job, reservation_uuid: r, amount: 10, now: doneAt } }, state)
            .forEach(e => {
              push(e, doneAt)
            })
      }
    }
    if (since >= wallet.CLOSE_BOOKS_EVERY) push(wallet.closeBooks(state, doneAt), doneAt)
    await store.append(`job-${job}`, events, { expected_revision: 'no_stream' })
    if (pending.length >= 10_000) await flush()
    if ((i + 1) % 100_000 === 0) log(`  seeded ${i + 1} jobs (${Math.round(((i + 1) / (performance.now() - t0)) * 1000)} jobs/s)`)
  }
  await flush()
}

const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SIGNUP_SCREENING: 'lists', VERIFIER_EGRESS_TEST_INTERVAL_S: '0' })
let seedMs = 0
let totalEvents: number
if (reuse) {
  const core = await openCore(config)
  totalEvents = await core.store.headPosition()
  await core.close()
  log(`read side: ${JOBS} jobs, ${totalEvents} events stored already`)
} else {
  log(`read side: seeding ${JOBS} jobs…`)
  const core = await openCore(config)
  const sealed = await core.ctx.sealer.seal(owner, 'someone.with.a.typical.address@example-company.com')
  const t0 = performance.now()
  await seed(core.store, JOBS, sealed)
  seedMs = performance.now() - t0
  totalEvents = await core.store.headPosition()
  // As if the service had run all along: the relay has handed every event to the bus already.
  await core.checkpoints.setCheckpoint('relay', totalEvents)
  await core.close()
  log(`  ${totalEvents} events in ${Math.round(seedMs / 1000)} s`)
}

// ── 2. Rebuild rate against a raw read ──────────────────────────────────────────────

let raw: { events: number; ms: number }
let rebuild: { events: number; ms: number }
{
  const core = await openCore(config)
  log('read side: raw read of every event…')
  let t0 = performance.now()
  let n = 0
  for (let from = 0; ; ) {
    const page = await core.store.readAll({ from_position: from, max_count: 5_000 })
    if (page.length === 0) break
    n += page.length
    from = page[page.length - 1].position
  }
  raw = { events: n, ms: performance.now() - t0 }
  log(`  ${n} events in ${Math.round(raw.ms)} ms (${Math.round((n / raw.ms) * 1000)} events/s)`)
  log('read side: rebuilding every projection…')
  t0 = performance.now()
  let last = 0
  const r = await rebuildProjections(core.store, core.ctx.reads, PROJECTIONS, {
    onProgress: (events, total) => {
      if (events - last >= 500_000) {
        last = events
        log(`  ${events}/${total} (${Math.round((events / (performance.now() - t0)) * 1000)} events/s)`)
      }
    }
  })
  rebuild = { events: r.events, ms: performance.now() - t0 }
  log(`  ${r.events} events in ${Math.round(rebuild.ms)} ms (${Math.round((r.events / rebuild.ms) * 1000)} events/s)`)
  await core.close()
}

// ── 2b. What SQLite alone costs to write those read models ─────────────────────────
// The least time any rebuild into this store can take: the rows the rebuild made (its
// generation, now live), already serialized, written again into an empty file with the
// read store's settings, in commits of 20,000 rows, then the same indexes built. Only the
// writes are timed (the rows are read from the rebuilt file between them, 20,000 at a
// time). No fold, no event read: a rebuild's rate cannot exceed `events / floor`.

const floor = writeFloor(join(dir, 'reads.db'), join(dir, 'bench-floor.db'))
log(`  SQLite alone: ${floor.rows} rows in ${Math.round(floor.insert_ms)} ms, indexes in ${Math.round(floor.index_ms)} ms`)

/** Times SQLite's writing of the live generation of every projection's collections into `to` (then removed). */
function writeFloor(from: string, to: string): { rows: number; insert_ms: number; index_ms: number } {
  const src = new DatabaseSync(from, { readOnly: true })
  const gens = new Map(
    (src.prepare('SELECT projection, gen FROM projection_generations').all() as Array<{ projection: string; gen: number }>).map(g => [
      g.projection,
      Number(g.gen)
    ])
  )
  const clear = (): void => {
    for (const f of [to, `${to}-wal`, `${to}-shm`]) rmSync(f, { force: true })
  }
  clear()
  const db = new DatabaseSync(to)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384')
  let rows = 0
  let insertMs = 0
  let indexMs = 0
  const indexes: string[] = []
  for (const p of PROJECTIONS) {
    for (const spec of p.collections) {
      const table = `${spec.name}__g${gens.get(p.name)}`
      const schema = src.prepare('SELECT type, sql FROM sqlite_schema WHERE tbl_name = ? AND sql IS NOT NULL').all(table) as Array<{
        type: string
        sql: string
      }>
      const create = schema.find(x => x.type === 'table')
      if (!create) continue
      db.exec(create.sql)
      indexes.push(...schema.filter(x => x.type === 'index').map(x => x.sql))
      const columns = (src.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map(c => c.name)
      const insert = db.prepare(`INSERT OR REPLACE INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`)
      const read = src.prepare(`SELECT ${columns.join(', ')} FROM ${table} WHERE _id > ? ORDER BY _id LIMIT 20000`)
      read.setReturnArrays(true)
      for (let after = ''; ; ) {
        const chunk = read.all(after) as unknown as SQLInputValue[][]
        if (chunk.length === 0) break
        after = chunk[chunk.length - 1][0] as string
        const t0 = performance.now()
        db.exec('BEGIN IMMEDIATE')
        for (const row of chunk) insert.run(...row)
        db.exec('COMMIT')
        insertMs += performance.now() - t0
        rows += chunk.length
      }
    }
  }
  const t0 = performance.now()
  for (const sql of indexes) db.exec(sql)
  indexMs = performance.now() - t0
  db.close()
  src.close()
  clear()
  return { rows, insert_ms: insertMs, index_ms: indexMs }
}

// ── 2c. The rebuild's reads and folds alone ──────────────────────────────────────────
// The rebuild's own page loop (foldHistory: its page size, its carried documents and its
// filter of keys written), into a store that keeps nothing: no
// document read back, no write, no index. Whatever overlaps the writes with the folds (a
// writer thread, say), a rebuild in this design takes at least this long; `floor / this` is
// the most of the floor it could reach.

const folds = await foldsAlone()
log(`  the rebuild's reads and folds alone: ${folds.events} events in ${Math.round(folds.ms)} ms`)

/** Reads every event and applies it to every projection as a rebuild does (`foldHistory`), writing nothing (see 2c). */
async function foldsAlone(): Promise<{ events: number; ms: number }> {
  const core = await openCore(config)
  const nothing = { get: async () => null, findOne: async () => null }
  const sink = { durable: true, collection: () => nothing, write: async () => {} } as unknown as ReadStore
  const t0 = performance.now()
  const events = await foldHistory(core.store, sink, PROJECTIONS)
  const ms = performance.now() - t0
  await core.close()
  return { events, ms }
}

// ── 3. Start-up of a fresh process, and its memory ─────────────────────────────────────

async function freePort(): Promise<number> {
  return await new Promise(resolve => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

/** The `svc serve` children still running: killed when this process exits, also after a failed stage (none is left behind). */
const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of running) c.kill('SIGKILL')
})

/** `svc serve` on `dataDir`: ms from spawn to /readyz 200, and resident memory (MiB) then. */
async function startServe(dataDir: string): Promise<{ child: ChildProcess; url: string; ready_ms: number; rss_mib: number }> {
  const port = await freePort()
  const t0 = performance.now()
  const { NATS_URL: _, ...env } = process.env
  // The embedded default: in-process bus, SQLite stores.
  const child = spawn(process.execPath, [cli, 'serve'], {
    env: {
      ...env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      SIGNUP_SCREENING: 'lists',
      VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
      ...unlimitedRates(dir)
    },
    stdio: 'ignore'
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`svc serve exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 10))
    if (performance.now() - t0 > 120_000) throw new Error('svc serve was not ready in 120 s')
  }
  const readyMs = performance.now() - t0
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024
  return { child, url, ready_ms: readyMs, rss_mib: rss }
}
const stopServe = async (child: ChildProcess): Promise<void> => {
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

log('read side: start-up on an empty DATA_DIR…')
const empty = await startServe(emptyDir)
await stopServe(empty.child)
log(`  ready in ${Math.round(empty.ready_ms)} ms, ${Math.round(empty.rss_mib)} MiB`)
log(`read side: start-up with ${JOBS} jobs stored…`)
const full = await startServe(dir)
log(`  ready in ${Math.round(full.ready_ms)} ms, ${Math.round(full.rss_mib)} MiB`)

// ── 4. GET /api/jobs at a million jobs ───────────────────────────────────────────────

const day = (daysAgo: number): string => new Date(Date.now() - daysAgo * DAY).toISOString()
const sample = (await (
  await fetch(`${full.url}/api/jobs?limit=1&offset=${Math.floor(JOBS / 2)}`, { headers: { authorization: `Bearer ${apiKey}` } })
).json()) as { items: Array<{ uuid: string }>; total: number }
const mid = sample.items[0]?.uuid ?? '0'
const QUERIES: Record<string, string> = {
  newest_first: '',
  page_50: 'offset=960&limit=96',
  completed_valid: 'status=completed&verdict=valid',
  risky_or_invalid_by_score: 'verdict=risky,invalid&sort=score&order=desc',
  failed_oldest_first: 'status=failed&order=asc',
  last_7_days: `from=${day(7)}&to=${day(0)}`,
  one_month_by_score: `from=${day(120)}&to=${day(90)}&sort=score`,
  month_valid_by_verdict: `from=${day(200)}&to=${day(170)}&status=completed&sort=verdict&order=asc`,
  by_status: 'sort=status',
  by_uuid: 'sort=uuid&order=asc',
  search_uuid_prefix: `search=${mid.slice(0, 13)}`,
  search_short_prefix: `search=${mid.slice(0, 6)}&sort=score`
}
log(`read side: GET /api/jobs, ${REQUESTS} requests per query shape…`)
const perQuery: Record<string, { p50_ms: number; p99_ms: number; total: number }> = {}
const all: number[] = []
for (let round = 0; round < REQUESTS; round++) {
  for (const [name, q] of Object.entries(QUERIES)) {
    const t0 = performance.now()
    const res = await fetch(`${full.url}/api/jobs?${q}`, { headers: { authorization: `Bearer ${apiKey}` } })
    const body = (await res.json()) as { total: number }
    const ms = performance.now() - t0
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(body)}`)
    all.push(ms)
    const entry = perQuery[name] ?? { p50_ms: 0, p99_ms: 0, total: body.total, samples: [] as number[] }
    ;(entry as unknown as { samples: number[] }).samples.push(ms)
    perQuery[name] = entry
  }
}
for (const [name, e] of Object.entries(perQuery)) {
  const samples = (e as unknown as { samples: number[] }).samples
  perQuery[name] = { p50_ms: r2(pct(samples, 50)), p99_ms: r2(pct(samples, 99)), total: e.total }
}

// ── 5. The ledger and statistics reads over a year (no goal: how they stand) ─────────

const LONG_READS: Record<string, string> = {
  overview_default: '/api/stats/overview',
  overview_year_by_day: '/api/stats/overview?granularity=day&days=364',
  overview_year_by_month: '/api/stats/overview?granularity=month&days=364',
  overview_year_by_month_paris: '/api/stats/overview?granularity=month&days=364&time_zone=Europe/Paris',
  overview_year_by_month_kolkata: '/api/stats/overview?granularity=month&days=364&time_zone=Asia/Kolkata',
  balance_history_default: '/api/wallet/balance-history',
  balance_history_year_by_day: '/api/wallet/balance-history?granularity=day&days=364',
  balance_history_year_by_month: '/api/wallet/balance-history?granularity=month&days=364',
  transactions_by_amount: '/api/wallet/transactions?sort=amount',
  transactions_grouped: '/api/wallet/transactions/grouped'
}
log(`read side: ledger and statistics reads, ${REQUESTS} requests each…`)
const longReads: Record<string, { p50_ms: number; p99_ms: number }> = {}
for (const [name, path] of Object.entries(LONG_READS)) {
  const samples: number[] = []
  for (let round = 0; round < REQUESTS; round++) {
    const t0 = performance.now()
    const res = await fetch(`${full.url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })
    await res.arrayBuffer()
    samples.push(performance.now() - t0)
    if (res.status !== 200) throw new Error(`${name}: ${res.status}`)
  }
  longReads[name] = { p50_ms: r2(pct(samples, 50)), p99_ms: r2(pct(samples, 99)) }
}

await stopServe(full.child)
if (args.keep || reuse) log(`kept ${dir}`)
else rmSync(dir, { recursive: true, force: true })
rmSync(emptyDir, { recursive: true, force: true })

const out = {
  jobs: JOBS,
  events_stored: totalEvents,
  seed_s: Math.round(seedMs / 1000),
  raw_read: { events: raw.events, ms: Math.round(raw.ms), events_per_s: Math.round((raw.events / raw.ms) * 1000) },
  rebuild: {
    projections: PROJECTIONS.length,
    events: rebuild.events,
    ms: Math.round(rebuild.ms),
    events_per_s: Math.round((rebuild.events / rebuild.ms) * 1000)
  },
  rebuild_share_of_raw_read: r2(rebuild.events / rebuild.ms / (raw.events / raw.ms)),
  /** SQLite's writes alone (2b): the most a rebuild into this store could reach, as a share of the raw read. */
  sqlite_write_floor: {
    rows: floor.rows,
    insert_ms: Math.round(floor.insert_ms),
    index_ms: Math.round(floor.index_ms),
    share_of_raw_read: r2(raw.ms / (floor.insert_ms + floor.index_ms))
  },
  /** The rebuild's reads and folds alone (2c): no document read back, no write. */
  folds_alone: { events: folds.events, ms: Math.round(folds.ms), floor_share: r2((floor.insert_ms + floor.index_ms) / folds.ms) },
  startup: {
    empty: { ready_ms: Math.round(empty.ready_ms), rss_mib: Math.round(empty.rss_mib) },
    million: { ready_ms: Math.round(full.ready_ms), rss_mib: Math.round(full.rss_mib) },
    ratio_ready: r2(full.ready_ms / empty.ready_ms),
    ratio_rss: r2(full.rss_mib / empty.rss_mib)
  },
  list_jobs: { requests: all.length, p50_ms: r2(pct(all, 50)), p99_ms: r2(pct(all, 99)), by_query: perQuery },
  ledger_and_statistics: longReads
}
if (args.json) console.log(JSON.stringify(out))
else {
  console.log(`read side (${JOBS} jobs, ${totalEvents} events)`)
  console.log(
    `  rebuild ${out.rebuild.events_per_s} events/s vs raw read ${out.raw_read.events_per_s} events/s: ${out.rebuild_share_of_raw_read} of it (goal ≥ 0.6)`
  )
  console.log(
    `    SQLite's writes alone of its ${floor.rows} rows: ${out.sqlite_write_floor.insert_ms} ms inserts + ${out.sqlite_write_floor.index_ms} ms indexes = ${out.sqlite_write_floor.share_of_raw_read} of the raw read at most`
  )
  console.log(
    `    its reads and folds alone, writing nothing: ${out.folds_alone.ms} ms, so at most ${out.folds_alone.floor_share} of that floor however its writes were overlapped`
  )
  console.log(
    `  start-up ${out.startup.million.ready_ms} ms (empty: ${out.startup.empty.ready_ms} ms; goal < 5000), ${out.startup.million.rss_mib} MiB resident (empty: ${out.startup.empty.rss_mib}; goal < 300)`
  )
  console.log(`  GET /api/jobs p50 ${out.list_jobs.p50_ms} ms, p99 ${out.list_jobs.p99_ms} ms over ${all.length} requests (goal p99 < 50)`)
  for (const [name, e] of Object.entries(perQuery)) console.log(`    ${name.padEnd(28)} p50 ${e.p50_ms} ms  p99 ${e.p99_ms} ms  (total ${e.total})`)
  console.log('  ledger and statistics reads (no goal)')
  for (const [name, e] of Object.entries(longReads)) console.log(`    ${name.padEnd(32)} p50 ${e.p50_ms} ms  p99 ${e.p99_ms} ms`)
}
