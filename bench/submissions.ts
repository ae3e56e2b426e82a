// Submissions against a bare route: POST
// /api/verify sustained for `--duration` seconds with 32 connections (autocannon), a
// distinct address each request, the rate limit lifted, against `svc serve` started as
// `npm start` starts it (its Node.js flags) on a fresh DATA_DIR, with a live key and then a
// test key; and, in the same run, a bare fastify route answering 202 (bench/bare-route.ts).
// The figures that count are the ratios to the bare route, p99 and the service's resident
// memory after the load, each printed beside its goal.
//   node bench/submissions.ts [--duration 10] [--connections 32] [--json] [--cpu-prof DIR]
// --cpu-prof writes a V8 CPU profile of the service (its whole run: warm-up, live key,
// test key) into DIR when it stops: where a submission's time goes.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { cpuMs, rssMb } from './bulk-api.ts'
import { grantTokens } from '../src/commands/wallet/grant-tokens.ts'
import { unlimitedRates } from '../test/support/plans.ts'
import { npmStartNodeFlags } from '../test/support/processes.ts'
import { client, signUp, startTestService, testConfig } from '../test/support/service.ts'

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    json: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' }
  }
})
const DURATION_S = Number(args.duration)
const CONNECTIONS = Number(args.connections)
const log = (msg: string): void => {
  process.stderr.write(`${msg}\n`)
}
/** Goals of the issue, said beside the figures. */
const GOALS = { ratio_to_bare: 0.25, p99_ms: 50, rss_mib: 300 }
/** Checks that need no network: the load is the submission and its settlement, not DNS or SMTP. */
const CHECKS = ['syntax', 'typo', 'disposable']

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL')
})

/** Starts `args` as a child with the service's Node.js flags; resolves with it and the first URL it prints or logs. */
async function startChild(file: string, childArgs: string[], env: NodeJS.ProcessEnv, flags: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...npmStartNodeFlags(), ...flags, file, ...childArgs], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  children.add(child)
  child.once('exit', () => children.delete(child))
  let out = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (!m) return
      // From now on its output (a log line per request) is read and dropped: a full pipe would stall it.
      child.stdout!.removeAllListeners('data')
      child.stdout!.resume()
      resolve(m[1])
    })
    child.once('exit', code => reject(new Error(`${file} exited with ${code} before it listened: ${out.slice(-500)}`)))
  })
  return { child, url }
}

interface Load {
  requests_per_s: number
  /** The service's CPU time (user and system) per answered request, ms: its cost, whatever autocannon took. */
  service_cpu_ms_per_request?: number
  p50_ms: number
  p99_ms: number
  answered_2xx: number
  other: number
}

/** `connections` connections POSTing for DURATION_S, each request a new address. */
async function load(url: string, key: string | null, label: string, seconds = DURATION_S): Promise<Load> {
  log(`submissions: ${label}, ${CONNECTIONS} connections for ${seconds} s…`)
  let n = 0
  const r = await autocannon({
    url: `${url}/api/verify`,
    connections: CONNECTIONS,
    duration: seconds,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
    requests: [
      {
        setupRequest: req => ({ ...req, body: JSON.stringify({ email: `person${n++}.${label.replace(/\W/g, '')}@submit-bench.com`, checks: CHECKS }) })
      }
    ]
  })
  return { requests_per_s: Math.round(r.requests.average), p50_ms: r.latency.p50, p99_ms: r.latency.p99, answered_2xx: r['2xx'], other: r.non2xx + r.errors }
}

const dir = mkdtempSync(join(tmpdir(), 'bench-submit-'))
// The account, its keys and plenty of tokens, written on the embedded default before the service starts.
log('submissions: an account with a live and a test key…')
const email = 'submit@example.com'
const plans = unlimitedRates(dir)
let liveKey: string
let testKey: string
{
  const setup = await startTestService(testConfig(dir, plans))
  const api = client(setup.url)
  const token = await signUp(api, dir, email)
  liveKey = (await api('POST', '/api/keys', { token, body: { name: 'live', environment: 'live' } })).body.raw_key
  testKey = (await api('POST', '/api/keys', { token, body: { name: 'test', environment: 'test' } })).body.raw_key
  await grantTokens(setup.core.ctx, { email, tokens: 50_000_000, reason: 'submissions bench', operator: 'bench' })
  await setup.close()
}

const { NATS_URL: _nats, ...inherited } = process.env
const bare = await startChild(new URL('./bare-route.ts', import.meta.url).pathname, [], inherited)
const svc = await startChild(
  new URL('../src/cli.ts', import.meta.url).pathname,
  ['serve'],
  {
    ...inherited,
    DATA_DIR: dir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    SIGNUP_SCREENING: 'lists',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
    ...plans
  },
  args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : []
)

// Warm-up (JIT, caches, the first SQLite pages), not counted: the bare route and the service.
await autocannon({ url: `${bare.url}/api/verify`, connections: CONNECTIONS, duration: 2, method: 'POST' })
await load(svc.url, testKey, 'warm-up', 2)
// Bare first, then the two key kinds, then bare again: the yardstick on both sides of the service's runs.
/** `load` against the service, with its CPU time per answered request. */
async function loadService(key: string, label: string): Promise<Load> {
  const before = cpuMs(svc.child.pid!)
  const l = await load(svc.url, key, label)
  const answered = l.answered_2xx + l.other
  return { ...l, service_cpu_ms_per_request: answered > 0 ? Math.round(((cpuMs(svc.child.pid!) - before) / answered) * 100) / 100 : 0 }
}
const bareBefore = await load(bare.url, null, 'bare route')
const live = await loadService(liveKey, 'live key')
const sandbox = await loadService(testKey, 'test key')
const bareAfter = await load(bare.url, null, 'bare route again')
const rss = rssMb(svc.child.pid!)
const bareRate = (bareBefore.requests_per_s + bareAfter.requests_per_s) / 2
const r2 = (x: number): number => Math.round(x * 100) / 100
const out = {
  connections: CONNECTIONS,
  duration_s: DURATION_S,
  bare: { before: bareBefore, after: bareAfter },
  live,
  test: sandbox,
  service_rss_mib_after: Math.round(rss),
  ratios: { live_to_bare: r2(live.requests_per_s / bareRate), test_to_bare: r2(sandbox.requests_per_s / bareRate) },
  goals: GOALS
}
for (const c of [bare.child, svc.child]) c.kill('SIGTERM')
// The service writes its profile as it exits.
if (svc.child.exitCode === null) await new Promise(resolve => svc.child.once('exit', resolve))
rmSync(dir, { recursive: true, force: true })

if (args.json) console.log(JSON.stringify(out))
else {
  const row = (name: string, l: Load, ratio: number | null): string =>
    `${name.padEnd(12)} ${String(l.requests_per_s).padStart(6)} req/s  p50 ${String(l.p50_ms).padStart(4)} ms  p99 ${String(l.p99_ms).padStart(4)} ms${
      ratio === null ? '' : `  ${ratio} of the bare route (goal ≥ ${GOALS.ratio_to_bare})`
    }${l.service_cpu_ms_per_request === undefined ? '' : `  (service CPU ${l.service_cpu_ms_per_request} ms a request)`}${l.other > 0 ? `  ${l.other} not 2xx` : ''}`
  console.log(`POST /api/verify, ${CONNECTIONS} connections, ${DURATION_S} s each, distinct addresses`)
  console.log(row('bare route', bareBefore, null))
  console.log(row('live key', live, out.ratios.live_to_bare))
  console.log(row('test key', sandbox, out.ratios.test_to_bare))
  console.log(row('bare again', bareAfter, null))
  console.log(`p99 goal < ${GOALS.p99_ms} ms; service resident memory after the load ${out.service_rss_mib_after} MiB (goal < ${GOALS.rss_mib} MiB)`)
}
process.exit(0)
