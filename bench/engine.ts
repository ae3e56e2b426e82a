// Benchmark: the engine against a one-connection-per-address mode of the same engine
// (how the open-source reference, Reacher, works: one SMTP connection per address, no
// per-MX throttling, no caches), over a simulated world of 10,000 addresses on 200
// domains, measured in one run. Prints wall time, addresses per second, SMTP sessions per
// address, wall time as a multiple of the world's lower bound, and agreement with the
// world's ground truth; then the same list as a batch through the HTTP API of `svc serve`
// (bench/bulk-api.ts), as a ratio to the engine alone (goal: the API adds less than 30%).
// `npm run bench -- --json` prints the same as one JSON object; `--no-api` skips the API run.
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { VerificationEngine } from '../src/verifier/engine.ts'
import { CachingMailResolver, DnsClient } from '../src/verifier/dns.ts'
import { DEFAULT_POLITENESS, unlimited } from '../src/verifier/politeness.ts'
import { CHECK_NAMES } from '../src/domain/checks.ts'
import type { WorldSpec } from './world.ts'
import { runApiBulk, type ApiBulkRun } from './bulk-api.ts'

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    domains: { type: 'string', default: '200' },
    'per-domain': { type: 'string', default: '50' },
    'banner-ms': { type: 'string', default: '100' },
    'reply-ms': { type: 'string', default: '20' },
    'greylist-ms': { type: 'string', default: '1000' },
    'max-sessions': { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1024' },
    seed: { type: 'string', default: '42' },
    'engine-only': { type: 'boolean', default: false },
    'no-api': { type: 'boolean', default: false }
  }
})
const N_DOMAINS = Number(args.domains)
const PER_DOMAIN = Number(args['per-domain'])
const LATENCY = { banner_ms: Number(args['banner-ms']), reply_ms: Number(args['reply-ms']) }
const GREYLIST_MS = Number(args['greylist-ms'])
const MAX_SESSIONS = Number(args['max-sessions'])
const CONCURRENCY = Number(args.concurrency)

// Deterministic world (mulberry32).
let seed = Number(args.seed) >>> 0
const rand = (): number => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let x = seed
  x = Math.imul(x ^ (x >>> 15), x | 1)
  x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296
}

const spec: WorldSpec = { dns_ip: '127.1.255.1', latency: LATENCY, max_sessions: MAX_SESSIONS, greylist_ms: GREYLIST_MS, domains: [] }
const truth = new Map<string, string>()
for (let d = 0; d < N_DOMAINS; d++) {
  const kind = d % 10 === 3 ? 'catch_all' : d % 10 === 7 ? 'greylist' : 'normal'
  const name = `bench-domain-${String(d).padStart(3, '0')}.com`
  const mailboxes: WorldSpec['domains'][number]['mailboxes'] = {}
  for (let i = 0; i < PER_DOMAIN; i++) {
    const local = `person${String(i).padStart(4, '0')}.${Math.floor(rand() * 1e6).toString(36)}`
    const r = rand()
    const box = r < 0.75 ? 'exists' : r < 0.95 ? 'missing' : 'full'
    mailboxes[local] = box
    const email = `${local}@${name}`
    truth.set(
      email,
      kind === 'catch_all'
        ? 'risky/accept_all'
        : box === 'exists'
          ? 'valid/accepted_email'
          : box === 'missing'
            ? 'invalid/mailbox_not_found'
            : 'risky/mailbox_full'
    )
  }
  spec.domains.push({ name, mx_host: `mx.${name}`, mx_ip: `127.1.${Math.floor(d / 250)}.${(d % 250) + 1}`, kind, mailboxes })
}
// A bulk list as customers send it: domains interleaved.
const byDomain = spec.domains.map(d => Object.keys(d.mailboxes).map(l => `${l}@${d.name}`))
const addresses: string[] = []
for (let i = 0; i < PER_DOMAIN; i++) for (const list of byDomain) addresses.push(list[i])

/**
 * Lower bound implied by the world: per MX, the banner, EHLO and MAIL FROM, then its
 * recipients (addresses plus one catch-all probe) spread over `max_sessions` sessions one
 * reply each; a greylisting MX adds the greylisting delay. MX hosts work in parallel.
 */
function lowerBoundMs(): number {
  let worst = 0
  for (const d of spec.domains) {
    const rcpts = Object.keys(d.mailboxes).length + 1
    let t = LATENCY.banner_ms + 2 * LATENCY.reply_ms + Math.ceil(rcpts / MAX_SESSIONS) * LATENCY.reply_ms
    if (d.kind === 'greylist') t += GREYLIST_MS
    worst = Math.max(worst, t)
  }
  return worst
}

async function startWorld(): Promise<{ child: ChildProcess; dns: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-world-'))
  const file = join(dir, 'spec.json')
  writeFileSync(file, JSON.stringify(spec))
  const child = fork(new URL('./world.ts', import.meta.url).pathname, [file], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    execArgv: process.env.WORLD_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/wprof'] : []
  })
  try {
    const dns = await new Promise<string>((resolve, reject) => {
      child.once('exit', code => reject(new Error(`world exited with ${code}`)))
      child.stdout!.on('data', (b: Buffer) => {
        const m = /ready (\S+)/.exec(b.toString())
        if (m) resolve(m[1])
      })
    })
    return { child, dns }
  } finally {
    // The world read its spec when it started (or failed to): the file is not needed past that.
    rmSync(dir, { recursive: true, force: true })
  }
}

async function worldCounters(child: ChildProcess): Promise<{ sessions: number; refused_421: number; rcpts: number }> {
  return await new Promise(resolve => {
    child.once('message', (m: any) => resolve(m.counters))
    child.send('counters')
  })
}

interface Run {
  mode: string
  wall_ms: number
  addresses_per_s: number
  smtp_sessions: number
  sessions_per_address: number
  rcpts: number
  refused_421: number
  vs_lower_bound: number
  agreement: number
  disagreements: Record<string, number>
  rss_mb: number
}

async function run(mode: 'engine' | 'naive'): Promise<Run> {
  const { child, dns } = await startWorld()
  try {
    const engine = new VerificationEngine({
      mode,
      resolver: new CachingMailResolver(new DnsClient({ servers: [dns], timeout_ms: 2_000 }), { cache: mode === 'engine' }),
      probe: { port: 25, helo_name: 'bench.verifier.example', mail_from: 'probe@bench.verifier.example', timeout_ms: 10_000, allow_private_targets: true },
      // The world's receivers allow MAX_SESSIONS each, and the engine is told so, as the API run is
      // (VERIFIER_MAX_SESSIONS_PER_MX): by default it opens one per MX of no known provider.
      politeness:
        mode === 'engine'
          ? { ...DEFAULT_POLITENESS, max_sessions_per_host: MAX_SESSIONS, burst_per_host: MAX_SESSIONS, max_sessions: CONCURRENCY }
          : unlimited(CONCURRENCY),
      greylist: { retry_ms: GREYLIST_MS, deadline_ms: 30_000 },
      result_cache_ttl_ms: mode === 'engine' ? 3_600_000 : 0
    })
    const t0 = performance.now()
    const results = await engine.verifyMany(
      addresses.map(email => ({ email, checks: CHECK_NAMES })),
      { greylist: 'wait' }
    )
    const wall = performance.now() - t0
    const counters = await worldCounters(child)
    let agree = 0
    const disagreements: Record<string, number> = {}
    results.forEach((r, i) => {
      const got = `${r.verdict}/${r.reason}`
      const want = truth.get(addresses[i])!
      if (got === want) agree++
      else disagreements[`${want} → ${got}`] = (disagreements[`${want} → ${got}`] ?? 0) + 1
    })
    return {
      mode: mode === 'engine' ? 'engine' : 'one connection per address',
      wall_ms: Math.round(wall),
      addresses_per_s: Math.round((addresses.length / wall) * 1000),
      smtp_sessions: counters.sessions,
      sessions_per_address: Math.round((counters.sessions / addresses.length) * 1000) / 1000,
      rcpts: counters.rcpts,
      refused_421: counters.refused_421,
      vs_lower_bound: Math.round((wall / lowerBoundMs()) * 100) / 100,
      agreement: Math.round((agree / addresses.length) * 10_000) / 100,
      disagreements,
      rss_mb: Math.round(process.memoryUsage().rss / 1e6)
    }
  } finally {
    child.kill()
  }
}

/** The same list as a batch through the HTTP API of `svc serve` (a fresh world: nothing cached, nothing greylisted yet). */
async function runApi(): Promise<ApiBulkRun & { agreement: number; smtp_sessions: number; refused_421: number; rcpts: number }> {
  const { child, dns } = await startWorld()
  try {
    const r = await runApiBulk(dns, addresses, { max_sessions_per_mx: MAX_SESSIONS, max_sessions: CONCURRENCY, greylist_ms: GREYLIST_MS })
    const agree = r.results.filter(x => truth.get(x.email) === `${x.verdict}/${x.reason}`).length
    const counters = await worldCounters(child)
    return {
      ...r,
      agreement: Math.round((agree / addresses.length) * 10_000) / 100,
      smtp_sessions: counters.sessions,
      refused_421: counters.refused_421,
      rcpts: counters.rcpts
    }
  } finally {
    child.kill()
  }
}

const engineRun = await run('engine')
const apiRun = args['no-api'] ? null : await runApi()
const naiveRun = args['engine-only'] ? null : await run('naive')
const summary = {
  world: {
    addresses: addresses.length,
    domains: N_DOMAINS,
    catch_all_domains: spec.domains.filter(d => d.kind === 'catch_all').length,
    greylisting_domains: spec.domains.filter(d => d.kind === 'greylist').length,
    latency_ms: LATENCY,
    max_sessions_per_mx: MAX_SESSIONS,
    greylist_ms: GREYLIST_MS,
    lower_bound_ms: lowerBoundMs(),
    concurrency: CONCURRENCY
  },
  engine: engineRun,
  naive: naiveRun,
  api:
    apiRun === null
      ? null
      : {
          wall_ms: apiRun.wall_ms,
          addresses_per_s: apiRun.addresses_per_s,
          chunks: apiRun.chunks,
          agreement: apiRun.agreement,
          smtp_sessions: apiRun.smtp_sessions,
          refused_421: apiRun.refused_421,
          rcpts: apiRun.rcpts,
          service_rss_mb: apiRun.service_rss_mb
        },
  ratios: {
    api_vs_engine: apiRun === null ? null : Math.round((apiRun.wall_ms / engineRun.wall_ms) * 100) / 100,
    fewer_sessions: naiveRun ? Math.round((naiveRun.smtp_sessions / engineRun.smtp_sessions) * 10) / 10 : null,
    faster: naiveRun ? Math.round((naiveRun.wall_ms / engineRun.wall_ms) * 10) / 10 : null
  },
  targets: {
    fewer_sessions_at_least_5x: naiveRun ? naiveRun.smtp_sessions / engineRun.smtp_sessions >= 5 : null,
    faster_at_least_3x: naiveRun ? naiveRun.wall_ms / engineRun.wall_ms >= 3 : null,
    within_2x_of_lower_bound: engineRun.vs_lower_bound <= 2,
    full_agreement: engineRun.agreement === 100,
    api_adds_less_than_30_percent: apiRun === null ? null : apiRun.wall_ms / engineRun.wall_ms < 1.3
  }
}

if (args.json) {
  console.log(JSON.stringify(summary))
} else {
  const w = summary.world
  console.log(
    `world: ${w.addresses} addresses on ${w.domains} domains (${w.catch_all_domains} catch-all, ${w.greylisting_domains} greylisting); banner ${w.latency_ms.banner_ms} ms, reply ${w.latency_ms.reply_ms} ms; ${w.max_sessions_per_mx} sessions per MX (421 beyond); greylisting ${w.greylist_ms} ms; lower bound ${w.lower_bound_ms} ms; ${w.concurrency} sessions at most`
  )
  const row = (r: Run): string =>
    `${r.mode.padEnd(28)} ${String(r.wall_ms).padStart(7)} ms ${String(r.addresses_per_s).padStart(6)}/s ${String(r.smtp_sessions).padStart(6)} sessions (${r.sessions_per_address}/address) ${String(r.refused_421).padStart(5)}×421 ${String(r.vs_lower_bound).padStart(5)}× lower bound ${String(r.agreement).padStart(6)}% agreement`
  console.log(row(engineRun))
  if (naiveRun) console.log(row(naiveRun))
  if (apiRun)
    console.log(
      `${'HTTP API (batch, chunks of 2,000)'.padEnd(28)} ${String(apiRun.wall_ms).padStart(7)} ms ${String(apiRun.addresses_per_s).padStart(6)}/s ${String(apiRun.chunks).padStart(3)} chunks, ${apiRun.smtp_sessions} sessions, ${apiRun.refused_421}×421, ${apiRun.agreement}% agreement, service peak RSS ${apiRun.service_rss_mb} MB: ${summary.ratios.api_vs_engine}× the engine's wall time`
    )
  if (naiveRun) console.log(`engine vs one connection per address: ${summary.ratios.fewer_sessions}× fewer sessions, ${summary.ratios.faster}× faster`)
  for (const [k, v] of Object.entries(summary.targets)) if (v !== null) console.log(`  ${v ? 'met   ' : 'MISSED'} ${k}`)
  for (const r of naiveRun ? [engineRun, naiveRun] : [engineRun])
    if (Object.keys(r.disagreements).length > 0) console.log(`  ${r.mode} disagreements: ${JSON.stringify(r.disagreements)}`)
}
