// Bulk verification through the public HTTP API: `svc serve` in a
// process of its own on a fresh DATA_DIR, probing the benchmark's simulated world; an
// account on the Business plan submits the list as a batch in chunks (as `svc verify-file`
// does) and polls it until completed. Used by bench/engine.ts, which runs the engine alone
// on the same world in the same run and prints the ratio.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const cli = new URL('../src/cli.ts', import.meta.url).pathname
const plans = new URL('../config/plans.json', import.meta.url).pathname

export interface ApiBulkRun {
  wall_ms: number
  addresses_per_s: number
  chunks: number
  results: Array<{ email: string; verdict: string; reason: string }>
  service_rss_mb: number
}

async function until<T>(fn: () => Promise<T | null>, timeoutMs: number, pauseMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v !== null) return v
    if (Date.now() > deadline) throw new Error('bulk-api: timed out')
    await new Promise(resolve => setTimeout(resolve, pauseMs))
  }
}

/** Resident memory of a process (MiB, from /proc). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Math.round(Number(m[1]) / 1024) : 0
}

/**
 * CPU time a process has used so far (user and system, ms; Linux `/proc/<pid>/stat`, in
 * clock ticks of 10 ms): the difference across a phase is what the phase cost it,
 * whatever else the machine did meanwhile.
 */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ')
  // After the command name: state is field 3, utime 14 and stime 15 (proc(5)).
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** A `svc serve` of a benchmark: its URL, process, a JSON client, and the operator's way to an account on a plan. */
export interface BenchService {
  url: string
  child: ChildProcess
  dir: string
  api: (method: string, path: string, body?: unknown, token?: string) => Promise<any>
  /** Registers and confirms an account, moves it to `plan` and credits it; its session token and a live API key. */
  account: (email: string, plan: string, tokens: number) => Promise<{ token: string; key: string }>
  stop: () => void
}

/** Starts `svc serve` on a fresh DATA_DIR with the shipped plans (rate limits out of reach) and `env`. */
export async function startBenchService(extra: Record<string, string>): Promise<BenchService> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-svc-'))
  // The shipped plans with rate limits a benchmark never reaches.
  const catalogue = JSON.parse(readFileSync(plans, 'utf8')) as { plans: Array<Record<string, unknown>> }
  for (const p of catalogue.plans) p.rate_limit_per_minute = 1_000_000_000
  writeFileSync(join(dir, 'plans.json'), JSON.stringify(catalogue))
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: dir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    PLANS_FILE: join(dir, 'plans.json'),
    SIGNUP_SCREENING: 'lists',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
    ...extra
  }
  delete env.NATS_URL
  // The V8 flags `npm start` and the image give the service (package.json "start").
  const flags = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.start as string)
    .split(' ')
    .filter(a => a.startsWith('--'))
  const child: ChildProcess = spawn(
    process.execPath,
    [...flags, ...(process.env.BENCH_SERVICE_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SERVICE_PROF}`] : []), cli, 'serve'],
    { env, stdio: ['ignore', 'pipe', 'inherit'] }
  )
  let out = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out)
      if (m) resolve(m[1])
    })
    child.once('exit', code => reject(new Error(`svc serve exited with ${code}`)))
  })
  child.stdout!.removeAllListeners('data')
  child.stdout!.resume()
  const api: BenchService['api'] = async (method, path, body, token) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...(token && { authorization: `Bearer ${token}` }) },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`)
    return text.length > 0 ? JSON.parse(text) : null
  }
  const account: BenchService['account'] = async (email, plan, tokens) => {
    // As a customer makes one: register, the mailed code, confirm.
    await api('POST', '/api/auth/register', { email, password: 'correct horse battery staple', locale: 'en' })
    const code = await until(async () => {
      const outbox = join(dir, 'outbox')
      if (!existsSync(outbox)) return null
      for (const f of readdirSync(outbox)) {
        const m = /code is (\d{6})/.exec(readFileSync(join(outbox, f), 'utf8'))
        if (m) return m[1]
      }
      return null
    }, 30_000)
    const token = (await api('POST', '/api/auth/confirm', { email, code })).access_token as string
    const key = (await api('POST', '/api/keys', { name: 'bench', environment: 'live' }, token)).raw_key as string
    // The operator moves it to the plan and credits it (operator commands on the same DATA_DIR).
    await promisify(execFile)(process.execPath, [cli, 'subscription', 'set', '--email', email, '--plan', plan, '--no-grant'], { env })
    if (tokens > 0)
      await promisify(execFile)(process.execPath, [cli, 'wallet', 'grant', '--email', email, '--tokens', String(tokens), '--reason', 'benchmark'], { env })
    await until(async () => ((await api('GET', '/api/subscription', undefined, token)).plan.code === plan ? true : null), 30_000)
    return { token, key }
  }
  return {
    url,
    child,
    dir,
    api,
    account,
    stop: () => {
      // Its DATA_DIR goes once it has exited (hundreds of MiB a run otherwise left in the temporary directory).
      child.once('exit', () => {
        rmSync(dir, { recursive: true, force: true })
      })
      child.kill('SIGTERM')
    }
  }
}

/**
 * Runs `addresses` through the API of a fresh `svc serve` probing the world at `dns`.
 * `verifier` is the engine's configuration of the engine-only run, so both probe alike.
 */
export async function runApiBulk(
  dns: string,
  addresses: readonly string[],
  verifier: { max_sessions_per_mx: number; max_sessions: number; greylist_ms: number },
  chunkSize = 2_000
): Promise<ApiBulkRun> {
  const svc = await startBenchService({
    VERIFIER_DNS_SERVERS: dns,
    VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
    VERIFIER_HELO_NAME: 'bench.verifier.example',
    VERIFIER_SMTP_TIMEOUT_MS: '10000',
    VERIFIER_MAX_SESSIONS_PER_MX: String(verifier.max_sessions_per_mx),
    VERIFIER_MAX_SESSIONS: String(verifier.max_sessions),
    VERIFIER_GREYLIST_RETRY_S: String(verifier.greylist_ms / 1000),
    VERIFIER_GREYLIST_DEADLINE_S: '30'
  })
  const { api, child } = svc
  try {
    const { key } = await svc.account('bench@bulk.example.com', 'business', addresses.length * 20)
    const t0 = performance.now()
    const chunks: string[][] = []
    for (let i = 0; i < addresses.length; i += chunkSize) chunks.push(addresses.slice(i, i + chunkSize))
    const first = await api('POST', '/api/batches', { emails: chunks[0], final: chunks.length === 1 }, key)
    for (let k = 1; k < chunks.length; k++) {
      const c0 = performance.now()
      await api('POST', `/api/batches/${first.uuid}/emails`, { emails: chunks[k], final: k === chunks.length - 1 }, key)
      if (process.env.BENCH_TRACE) console.error(`chunk ${k}: ${Math.round(performance.now() - c0)} ms`)
    }
    if (process.env.BENCH_TRACE) console.error(`intake done at ${Math.round(performance.now() - t0)} ms`)
    let peak = 0
    let last = -1
    await until(
      async () => {
        peak = Math.max(peak, rssMb(child.pid!))
        const b = await api('GET', `/api/batches/${first.uuid}`, undefined, key)
        if (process.env.BENCH_TRACE && b.progress.processed !== last) {
          last = b.progress.processed
          console.error(`${Math.round(performance.now() - t0)} ms: ${b.progress.processed} processed`)
        }
        return b.status === 'completed' ? true : null
      },
      600_000,
      50
    )
    const wall = performance.now() - t0
    const results: ApiBulkRun['results'] = []
    for (let offset = 0; offset < addresses.length; offset += 96) {
      const page = await api('GET', `/api/batches/${first.uuid}/results?limit=96&offset=${offset}`, undefined, key)
      for (const r of page.items) results.push({ email: r.email, verdict: r.verdict, reason: r.reason })
    }
    return { wall_ms: Math.round(wall), addresses_per_s: Math.round((addresses.length / wall) * 1000), chunks: chunks.length, results, service_rss_mb: peak }
  } finally {
    svc.stop()
  }
}
