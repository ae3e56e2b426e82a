// Benchmark: the write side at history and under contention, measured in one run.
//  1. Submission latency (the command: seal, reserve on the wallet, queue the job) on a
//     fresh account and on one with 1,000,000 past jobs in the same SQLite event store,
//     p50 and p99 and their ratio (goal ≤ 1.2); the first command of a cold process on
//     each; and, for scale, what folding the old account's whole ledger costs (what every
//     submission paid before the books were closed).
//  2. 1,000 concurrent POST /api/verify on one wallet through the HTTP API (embedded
//     default): throughput, answers by status (goal: 0 answered 409 or 5xx), and the final
//     balance against a replay of the ledger; once with group commit, once without.
//  3. A wallet event folded with 100 and with 20,000 reservations open (jobs in flight),
//     µs per event (the median of 9 interleaved rounds) and their ratio (goal ≤ 2: a
//     command's cost does not grow with them).
// Usage: node bench/write-side.ts [--jobs 1000000] [--samples 2000] [--burst 1000] [--json]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { v7 as uuidv7 } from 'uuid'
import { loadConfig } from '../src/config.ts'
import { openCore } from '../src/core.ts'
import { handle } from '../src/eventsourcing/command-handler.ts'
import { submitJob, type Submitter } from '../src/flows/job-submission/submit-job.ts'
import { grantTokens } from '../src/commands/wallet/grant-tokens.ts'
import * as wallet from '../src/domain/wallet/decider.ts'
import { auditWallet } from '../src/domain/wallet/audit.ts'
import type { WalletEvent } from '../src/domain/wallet/events.ts'
import { CHECK_NAMES } from '../src/domain/checks.ts'
import { simulate } from '../src/verifier/sandbox.ts'
import type { EventStore, NewEvent } from '../src/ports/event-store.ts'
import { unlimitedRates } from '../test/support/plans.ts'
import { client, signUp, startTestService, testConfig } from '../test/support/service.ts'

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '2000' },
    burst: { type: 'string', default: '1000' },
    json: { type: 'boolean', default: false }
  }
})
const JOBS = Number(args.jobs)
const SAMPLES = Number(args.samples)
const BURST = Number(args.burst)
const log = (msg: string): void => {
  process.stderr.write(`${msg}\n`)
}
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const r2 = (x: number): number => Math.round(x * 100) / 100

// ── 1. Latency at history ────────────────────────────────────────────────────────────

const dir = mkdtempSync(join(tmpdir(), 'bench-write-'))
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SIGNUP_SCREENING: 'lists', VERIFIER_EGRESS_TEST_INTERVAL_S: '0' })
const OLD = uuidv7()
const FRESH = uuidv7()

/**
 * Writes `jobs` past jobs of one account as the service would have: each reserved and
 * captured on the wallet (decided by the wallet decider, the books closed every
 * CLOSE_BOOKS_EVERY events as `handle` does), and each job stream queued and completed.
 */
async function seed(store: EventStore, owner: string, jobs: number, sealedEmail: string): Promise<void> {
  const stream = `wallet-${owner}`
  const at = new Date(Date.now() - 30 * 86_400_000).toISOString()
  const meta = { occurred_at: at, actor: owner, correlation_id: null, causation_id: null }
  const result = simulate('someone@example.com', CHECK_NAMES, new Date(at))
  let state = wallet.initialState()
  let since = 0
  let revision = -1
  let pending: NewEvent[] = []
  const push = (e: WalletEvent): void => {
    pending.push({ id: uuidv7(), type: e.type, data: e.data as unknown as Record<string, unknown>, metadata: meta })
    state = wallet.evolve(state, e)
    since = e.type === 'WalletBooksClosed' ? 0 : since + 1
  }
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return
    revision = (await store.append(stream, pending, { expected_revision: revision < 0 ? 'no_stream' : revision })).next_expected_revision
    pending = []
  }
  wallet
    .decide(
      {
        type: 'GrantTokens',
        data: { user_uuid: owner, grant_uuid: 'seed', amount: 10 * jobs + 1_000_000, source: 'operator', plan: null, reason: 'bench', now: at }
      },
      state
    )
    .forEach(push)
  const t0 = performance.now()
  for (let i = 0; i < jobs; i++) {
    const job = uuidv7()
    const r = randomUUID()
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
      .forEach(push)
    wallet.decide({ type: 'CaptureTokens', data: { user_uuid: owner, job_uuid: job, reservation_uuid: r, amount: 10, now: at } }, state).forEach(push)
    if (since >= wallet.CLOSE_BOOKS_EVERY) push(wallet.closeBooks(state, at))
    await store.append(
      `job-${job}`,
      [
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
        },
        {
          id: uuidv7(),
          type: 'JobCompleted',
          data: {
            job_uuid: job,
            user_uuid: owner,
            verdict: result.verdict,
            reason: result.reason,
            score: result.score,
            charge: 10,
            result: { ...result, email: undefined, normalized: sealedEmail },
            completed_at: at
          },
          metadata: meta
        }
      ],
      { expected_revision: 'no_stream' }
    )
    if (pending.length >= 10_000) await flush()
    if ((i + 1) % 100_000 === 0) log(`  seeded ${i + 1} jobs (${Math.round(((i + 1) / (performance.now() - t0)) * 1000)} jobs/s)`)
  }
  await flush()
}

log(`write side: seeding an account with ${JOBS} past jobs…`)
const seeding = await openCore(config)
const sealed = await seeding.ctx.sealer.seal(OLD, 'someone.with.a.typical.address@example-company.com')
const seedStart = performance.now()
await seed(seeding.store, OLD, JOBS, sealed)
await seeding.ctx.sealer.seal(FRESH, 'x@example.com')
await handle(seeding.ctx, `wallet-${FRESH}`, wallet, {
  type: 'GrantTokens',
  data: { user_uuid: FRESH, grant_uuid: 'seed', amount: 1_000_000, source: 'operator', plan: null, reason: 'bench', now: new Date().toISOString() }
})
const seedMs = performance.now() - seedStart
const totalEvents = await seeding.store.headPosition()
await seeding.close()
log(`  ${totalEvents} events in ${Math.round(seedMs / 1000)} s`)

// A new process's view: an empty cache, the same files.
const core = await openCore(config)
const ctx = core.ctx
const by = (user: string): Submitter => ({ user_uuid: user, environment: 'live', key_uuid: null, enabled_checks: CHECK_NAMES })
const submitOnce = async (user: string, i: number): Promise<number> => {
  const t0 = performance.now()
  const r = await submitJob(ctx, by(user), { email: `user${i}@example.com` })
  const ms = performance.now() - t0
  // Settled as the verifier would (not timed), so that open reservations stay few.
  await handle(ctx, `wallet-${user}`, wallet, {
    type: 'CaptureTokens',
    data: { user_uuid: user, job_uuid: r.job_uuid, reservation_uuid: null, amount: 10, now: new Date().toISOString() }
  })
  return ms
}
const coldOld = await submitOnce(OLD, -1)
const coldFresh = await submitOnce(FRESH, -1)
const lat: Record<string, number[]> = { [OLD]: [], [FRESH]: [] }
for (let i = 0; i < SAMPLES; i++) {
  for (const user of i % 2 === 0 ? [OLD, FRESH] : [FRESH, OLD]) lat[user].push(await submitOnce(user, i))
}

// For scale: folding the old account's whole ledger, page by page (what each submission read before).
const foldStart = performance.now()
let folded = wallet.initialState()
let ledgerEvents = 0
for (let from = 0; ; ) {
  const page = await core.store.readStream(`wallet-${OLD}`, { from_revision: from, max_count: 20_000 })
  for (const e of page) folded = wallet.evolve(folded, { type: e.type, data: e.data } as WalletEvent)
  ledgerEvents += page.length
  if (page.length < 20_000) break
  from += page.length
}
const foldMs = performance.now() - foldStart
await core.close()
rmSync(dir, { recursive: true, force: true })

const latency = {
  past_jobs: JOBS,
  events_stored: totalEvents,
  seed_s: Math.round(seedMs / 1000),
  samples_per_account: SAMPLES,
  fresh: { p50_ms: r2(pct(lat[FRESH], 50)), p99_ms: r2(pct(lat[FRESH], 99)), cold_first_ms: r2(coldFresh) },
  million: { p50_ms: r2(pct(lat[OLD], 50)), p99_ms: r2(pct(lat[OLD], 99)), cold_first_ms: r2(coldOld) },
  ratio_p50: r2(pct(lat[OLD], 50) / pct(lat[FRESH], 50)),
  ratio_p99: r2(pct(lat[OLD], 99) / pct(lat[FRESH], 99)),
  full_ledger_fold: { events: ledgerEvents, ms: Math.round(foldMs), balance: folded.balance }
}

// ── 2. Contention ─────────────────────────────────────────────────────────────────────

/** Balance shown, replayed from the ledger (the decider's fold, every closing checked) and summed raw. */
function ledgerCheck(events: Array<{ type: string; data: Record<string, unknown> }>, shown: number): Record<string, unknown> {
  const audit = auditWallet(events.map(e => ({ type: e.type, data: e.data }) as WalletEvent))
  const sum = (type: string): number => events.filter(e => e.type === type).reduce((s, e) => s + Number(e.data.amount), 0)
  const raw = sum('TokensGranted') - sum('TokensReserved') + sum('TokensReleased')
  return {
    balance_shown: shown,
    ledger_replay_balance: audit.state.balance,
    raw_sum_balance: raw,
    ledger_discrepancies: audit.discrepancies.length,
    balance_equals_replay: shown === audit.state.balance && shown === raw
  }
}

/** BURST concurrent submissions as commands on one wallet (the write side alone); `batchMax` 1 turns group commit off. */
async function commandBurst(batchMax: number): Promise<Record<string, unknown>> {
  const d = mkdtempSync(join(tmpdir(), 'bench-cmd-'))
  const c = await openCore(loadConfig({ DATA_DIR: d, LOG_LEVEL: 'silent', COMMAND_BATCH_MAX: String(batchMax) }))
  try {
    const user = uuidv7()
    let walletAppends = 0
    const append = c.store.append.bind(c.store)
    c.store.append = async (stream, events, options) => {
      if (stream === `wallet-${user}`) walletAppends++
      return await append(stream, events, options)
    }
    await handle(c.ctx, `wallet-${user}`, wallet, {
      type: 'GrantTokens',
      data: { user_uuid: user, grant_uuid: 'g', amount: (BURST + 1) * 10, source: 'operator', plan: null, reason: 'bench', now: new Date().toISOString() }
    })
    await submitJob(c.ctx, by(user), { email: 'warm@example.com' })
    walletAppends = 0
    const t0 = performance.now()
    const rs = await Promise.allSettled(Array.from({ length: BURST }, (_, i) => submitJob(c.ctx, by(user), { email: `c${i}@example.com` })))
    const wallMs = performance.now() - t0
    const events = await c.store.readStream(`wallet-${user}`)
    const shown = auditWallet(events.map(e => ({ type: e.type, data: e.data }) as WalletEvent)).state.balance
    return {
      group_commit: batchMax > 1,
      submissions: BURST,
      wall_ms: Math.round(wallMs),
      per_s: Math.round((BURST / wallMs) * 1000),
      refused: rs.filter(r => r.status === 'rejected').length,
      wallet_appends: walletAppends,
      ...ledgerCheck(events, shown)
    }
  } finally {
    await c.close()
    rmSync(d, { recursive: true, force: true })
  }
}

/** BURST concurrent POST /api/verify on one wallet through the HTTP API (embedded default), after a warm-up. */
async function httpBurst(): Promise<Record<string, unknown>> {
  const d = mkdtempSync(join(tmpdir(), 'bench-burst-'))
  // Throughput, not the rate limiter, is measured here: rate limits no run reaches.
  const service = await startTestService(testConfig(d, unlimitedRates(d)))
  try {
    const api = client(service.url)
    const email = 'burst@example.com'
    const token = await signUp(api, d, email)
    await grantTokens(service.core.ctx, { email, tokens: 100_000, reason: 'bench', operator: 'bench' })
    const key = (await api('POST', '/api/keys', { token, body: { name: 'bench', environment: 'live' } })).body.raw_key
    const owner = (await api('GET', '/api/users/me', { token })).body.uuid
    // A disposable address with the disposable check: a firm verdict (1 token, captured) without any network.
    const fire = async (n: number, tag: string): Promise<Array<{ status: number }>> =>
      await Promise.all(
        Array.from({ length: n }, (_, i) => api('POST', '/api/verify', { token: key, body: { email: `${tag}${i}@mailinator.com`, checks: ['disposable'] } }))
      )
    const warm = await fire(200, 'warm')
    const t0 = performance.now()
    const rs = await fire(BURST, 'b')
    const wallMs = performance.now() - t0
    const byStatus: Record<string, number> = {}
    for (const r of rs) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1
    const accepted = rs.filter(r => r.status === 202).length + warm.filter(r => r.status === 202).length
    // Every accepted job settled (captured by the verifier), then the balance against the ledger.
    for (let i = 0; i < 600; i++) {
      const w = (await api('GET', '/api/wallet', { token: key })).body
      if (w.reserved === 0 && w.spent === accepted) break
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    const shown = (await api('GET', '/api/wallet', { token: key })).body
    const events = await service.core.store.readStream(`wallet-${owner}`)
    return {
      submissions: BURST,
      wall_ms: Math.round(wallMs),
      per_s: Math.round((BURST / wallMs) * 1000),
      by_status: byStatus,
      answered_409_or_5xx: rs.filter(r => r.status === 409 || r.status >= 500).length,
      settled: shown.reserved === 0 && shown.spent === accepted,
      ...ledgerCheck(events, shown.balance)
    }
  } finally {
    await service.close()
    rmSync(d, { recursive: true, force: true })
  }
}

log(`write side: ${BURST} concurrent submissions on one wallet: commands with and without group commit, then the HTTP API…`)
const grouped = await commandBurst(config.commands.batch_max)
const single = await commandBurst(1)
const http = await httpBurst()
const contention = { commands: { grouped, one_append_per_command: single, group_commit_speedup: r2(Number(grouped.per_s) / Number(single.per_s)) }, http }

// ── 3. Jobs in flight ──────────────────────────────────────────────────────────────────
// A wallet event folded (what each command pays for the events appended since its cached
// state) with few and with many reservations open: jobs queued and not settled yet.

/** µs per event folding `pairs` reserve-then-capture pairs onto a wallet holding `open` open reservations. */
function foldCost(open: number, pairs = 10_000): number {
  const at = new Date().toISOString()
  let s = wallet.evolve(wallet.initialState(), {
    type: 'TokensGranted',
    data: { user_uuid: OLD, grant_uuid: 'g', amount: 1e9, source: 'operator', plan: null, reason: 'bench', granted_at: at }
  } as unknown as WalletEvent)
  for (let i = 0; i < open; i++)
    s = wallet.evolve(s, {
      type: 'TokensReserved',
      data: { user_uuid: OLD, job_uuid: `open-${i}`, reservation_uuid: `r-open-${i}`, amount: 1, reserved_at: at }
    })
  const t0 = performance.now()
  for (let i = 0; i < pairs; i++) {
    s = wallet.evolve(s, { type: 'TokensReserved', data: { user_uuid: OLD, job_uuid: `j-${i}`, reservation_uuid: `r-${i}`, amount: 1, reserved_at: at } })
    s = wallet.evolve(s, { type: 'TokensCaptured', data: { user_uuid: OLD, job_uuid: `j-${i}`, reservation_uuid: `r-${i}`, amount: 1, captured_at: at } })
  }
  return ((performance.now() - t0) * 1000) / (2 * pairs)
}
// Warm-up: both sizes, so that neither round pays for compiling the fold.
foldCost(100)
foldCost(20_000)
// One round folds 20,000 events in a few milliseconds, so one collection landing in it can
// make it ten times slower: the figure is the median of 9 rounds, the two sizes interleaved
// (the same conditions for both).
const rounds = { few: [] as number[], many: [] as number[] }
for (let i = 0; i < 9; i++) {
  rounds.few.push(foldCost(100))
  rounds.many.push(foldCost(20_000))
}
const inFlight = {
  few: { open: 100, us_per_event: r2(pct(rounds.few, 50)) },
  many: { open: 20_000, us_per_event: r2(pct(rounds.many, 50)) },
  rounds: 9,
  ratio: 0
}
inFlight.ratio = r2(pct(rounds.many, 50) / pct(rounds.few, 50))

const summary = { latency, contention, in_flight: inFlight }
if (args.json) console.log(JSON.stringify(summary))
else {
  const l = latency
  console.log(`write side: submission latency (command: seal, reserve, queue), ${SAMPLES} per account, one SQLite store of ${l.events_stored} events`)
  console.log(`  fresh account        p50 ${l.fresh.p50_ms} ms  p99 ${l.fresh.p99_ms} ms  (cold first command ${l.fresh.cold_first_ms} ms)`)
  console.log(`  ${JOBS} past jobs   p50 ${l.million.p50_ms} ms  p99 ${l.million.p99_ms} ms  (cold first command ${l.million.cold_first_ms} ms)`)
  console.log(`  ratio (history / fresh): p50 ${l.ratio_p50}×, p99 ${l.ratio_p99}× (goal ≤ 1.2)`)
  console.log(`  folding that account's whole ledger (${l.full_ledger_fold.events} events), as every submission did before: ${l.full_ledger_fold.ms} ms`)
  for (const c of [grouped, single]) {
    console.log(
      `write side: ${BURST} concurrent submitJob commands on one wallet, ${c.group_commit ? 'group commit' : 'one append per command'}: ${c.wall_ms} ms, ${c.per_s}/s, ${c.refused} refused, ${c.wallet_appends} wallet appends; balance = ledger replay: ${c.balance_equals_replay}`
    )
  }
  console.log(`  group commit: ${contention.commands.group_commit_speedup}× the submissions per second of one append per command`)
  console.log(
    `write side: a wallet event folded with ${inFlight.few.open} reservations open ${inFlight.few.us_per_event} µs, with ${inFlight.many.open} open ${inFlight.many.us_per_event} µs: ${inFlight.ratio}× (goal ≤ 2: no copy of the reservations in flight)`
  )
  console.log(
    `write side: ${BURST} concurrent POST /api/verify on one wallet (after 200 to warm up): ${http.wall_ms} ms, ${http.per_s}/s, answers ${JSON.stringify(http.by_status)}, ${http.answered_409_or_5xx} answered 409 or 5xx; all settled: ${http.settled}; balance ${http.balance_shown} = ledger replay ${http.ledger_replay_balance} = raw sum ${http.raw_sum_balance}: ${http.balance_equals_replay}`
  )
}
