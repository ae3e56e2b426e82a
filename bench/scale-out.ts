// Submissions on SQLite and on PostgreSQL, with one `svc api` process and with two: POST
// /api/verify (up to its 202) for `--duration` seconds with 32 connections in all (autocannon;
// with two processes, half on each, as a load balancer spreads them), a distinct address each
// request, the rate limit lifted, a live key and a test key, each configuration on a fresh
// store. Printed per configuration: submissions a second, p99, and the API processes' CPU
// time per submission (user + system from /proc, summed over the processes): what scaling
// out buys on this machine's two cores, and where the store becomes the limit.
//   node bench/scale-out.ts [--duration 8] [--connections 32] [--json]
// PostgreSQL: a database of its own on POSTGRES_URL (default the local server), dropped after.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { cpuMs } from './bulk-api.ts'
import { grantTokens } from '../src/commands/wallet/grant-tokens.ts'
import { unlimitedRates } from '../test/support/plans.ts'
import { npmStartNodeFlags } from '../test/support/processes.ts'
import { client, signUp, startTestService, testConfig } from '../test/support/service.ts'

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '32' },
    json: { type: 'boolean', default: false }
  }
})
const DURATION_S = Number(args.duration)
const CONNECTIONS = Number(args.connections)
const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
/** Checks that need no network: the load is the submission, not DNS or SMTP. */
const CHECKS = ['syntax', 'typo', 'disposable']
const log = (msg: string): void => {
  process.stderr.write(`${msg}\n`)
}

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL')
})

/** `svc api` with the service's Node.js flags on `env`; resolves with it and its URL once it listens. */
async function startApi(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...npmStartNodeFlags(), new URL('../src/cli.ts', import.meta.url).pathname, 'api'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit']
  })
  children.add(child)
  child.once('exit', () => children.delete(child))
  let out = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out)
      if (!m) return
      child.stdout!.removeAllListeners('data')
      child.stdout!.resume()
      resolve(m[1])
    })
    child.once('exit', code => reject(new Error(`svc api exited with ${code} before it listened: ${out.slice(-500)}`)))
  })
  return { child, url }
}

interface Run {
  submissions_per_s: number
  p99_ms: number
  /** CPU time of the API processes (summed) per answered request, ms. */
  api_cpu_ms_per_submission: number
  answered_2xx: number
  other: number
}

/** CONNECTIONS connections spread evenly over `urls` for `seconds`, each request a new address; with the processes' CPU time. */
async function load(urls: string[], pids: number[], key: string, label: string, seconds = DURATION_S): Promise<Run> {
  let n = 0
  const cpuBefore = pids.reduce((s, p) => s + cpuMs(p), 0)
  const results = await Promise.all(
    urls.map(url =>
      autocannon({
        url: `${url}/api/verify`,
        connections: Math.max(1, Math.round(CONNECTIONS / urls.length)),
        duration: seconds,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        requests: [{ setupRequest: req => ({ ...req, body: JSON.stringify({ email: `p${n++}.${label}@scale-bench.com`, checks: CHECKS }) }) }]
      })
    )
  )
  const cpu = pids.reduce((s, p) => s + cpuMs(p), 0) - cpuBefore
  const answered = results.reduce((s, r) => s + r['2xx'] + r.non2xx, 0)
  return {
    submissions_per_s: Math.round(results.reduce((s, r) => s + r.requests.average, 0)),
    p99_ms: Math.max(...results.map(r => r.latency.p99)),
    api_cpu_ms_per_submission: answered > 0 ? Math.round((cpu / answered) * 1000) / 1000 : 0,
    answered_2xx: results.reduce((s, r) => s + r['2xx'], 0),
    other: results.reduce((s, r) => s + r.non2xx + r.errors, 0)
  }
}

/** A fresh store (`database`: a PostgreSQL URL, or null for SQLite in the directory), an account with a live and a test key, `processes` APIs on it, both keys measured. */
async function measure(database: string | null, processes: number): Promise<{ live: Run; test: Run }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-scale-'))
  try {
    const plans = unlimitedRates(dir)
    const storeEnv = { ...plans, ...(database && { DATABASE_URL: database, DATABASE_POOL_SIZE: '8' }) }
    const setup = await startTestService(testConfig(dir, storeEnv))
    const api = client(setup.url)
    const token = await signUp(api, dir, 'scale@example.com')
    const liveKey = (await api('POST', '/api/keys', { token, body: { name: 'live', environment: 'live' } })).body.raw_key as string
    const testKey = (await api('POST', '/api/keys', { token, body: { name: 'test', environment: 'test' } })).body.raw_key as string
    await grantTokens(setup.core.ctx, { email: 'scale@example.com', tokens: 50_000_000, reason: 'scale-out bench', operator: 'bench' })
    await setup.close()
    const { NATS_URL: _nats, ...inherited } = process.env
    const env = {
      ...inherited,
      DATA_DIR: dir,
      HOST: '127.0.0.1',
      PORT: '0',
      // At info: the line saying where it listens (its per-request lines are read and dropped).
      LOG_LEVEL: 'info',
      SIGNUP_SCREENING: 'lists',
      VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
      ...storeEnv
    }
    const apis = []
    for (let i = 0; i < processes; i++) apis.push(await startApi(env))
    const urls = apis.map(a => a.url)
    const pids = apis.map(a => a.child.pid!)
    const label = `${database ? 'pg' : 'sqlite'}${processes}`
    log(`scale-out: ${database ? 'PostgreSQL' : 'SQLite'}, ${processes} API process${processes > 1 ? 'es' : ''}: warm-up, live key, test key…`)
    await load(urls, pids, testKey, `${label}w`, 2)
    const live = await load(urls, pids, liveKey, `${label}l`)
    const test = await load(urls, pids, testKey, `${label}t`)
    for (const a of apis) a.child.kill('SIGTERM')
    await Promise.all(apis.map(a => (a.child.exitCode === null ? new Promise(resolve => a.child.once('exit', resolve)) : null)))
    return { live, test }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2_000 })
const database = `svc_bench_scale_${process.pid}`
let postgres: string | null = null
try {
  await admin.connect()
  postgres = POSTGRES_URL
} catch {
  log(`scale-out: no PostgreSQL answers at ${POSTGRES_URL}; SQLite only`)
}
/** A database of its own for one configuration, made empty. */
async function freshDatabase(): Promise<string> {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  await admin.query(`CREATE DATABASE ${database}`)
  const u = new URL(POSTGRES_URL)
  u.pathname = `/${database}`
  return u.toString()
}

const out: Record<string, { live: Run; test: Run }> = {}
// Interleaved: SQLite and PostgreSQL side by side at each process count.
for (const processes of [1, 2]) {
  out[`sqlite_${processes}`] = await measure(null, processes)
  if (postgres) out[`postgresql_${processes}`] = await measure(await freshDatabase(), processes)
}
if (postgres) {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {})
  await admin.end()
}

if (args.json) console.log(JSON.stringify({ connections: CONNECTIONS, duration_s: DURATION_S, ...out }))
else {
  console.log(`POST /api/verify up to the 202 (svc api), ${CONNECTIONS} connections in all, ${DURATION_S} s each, distinct addresses`)
  for (const [name, r] of Object.entries(out))
    for (const [key, run] of Object.entries(r))
      console.log(
        `  ${name.padEnd(13)} ${key.padEnd(4)} ${String(run.submissions_per_s).padStart(6)} submissions/s  p99 ${String(run.p99_ms).padStart(4)} ms  API CPU ${run.api_cpu_ms_per_submission} ms a submission${run.other > 0 ? `  ${run.other} not 2xx` : ''}`
      )
}
process.exit(0)
