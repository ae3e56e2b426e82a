// A customer's list at scale: a CSV of 1,000,000
// rows and 10 columns (2% repeated addresses) through `svc verify-file`, a process of its
// own, against `svc serve` (another) probing the benchmark's simulated world (a third).
// Measured in one run: the CLI's peak resident memory (goal < 300 MiB: the file is
// streamed, the run's state is on disk), and the time the file round trip adds to the
// batch's own — reading the file and de-duplicating it, then writing every row back with
// its results — as fractions of the verify phase (goal for the merge < 20%); and the
// output checked: every row, in order, with the world's verdict.
// Usage: node bench/list-file.ts [--rows 1000000] [--json]
import { fork, spawn, type ChildProcess } from 'node:child_process'
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { parse } from 'csv-parse'
import type { WorldSpec } from './world.ts'
import { startBenchService } from './bulk-api.ts'

const { values: args } = parseArgs({
  options: { rows: { type: 'string', default: '1000000' }, json: { type: 'boolean', default: false }, domains: { type: 'string', default: '200' } }
})
const ROWS = Number(args.rows)
const DOMAINS = Number(args.domains)
const log = (line: string): void => {
  process.stderr.write(`${line}\n`)
}
const cli = new URL('../src/cli.ts', import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), 'bench-list-'))

// The world: DOMAINS domains, each with its share of the list's mailboxes (75% exist, 20% missing, 5% full).
let seed = 42
const rand = (): number => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let x = seed
  x = Math.imul(x ^ (x >>> 15), x | 1)
  x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296
}
const unique = Math.ceil(ROWS * 0.98)
const perDomain = Math.ceil(unique / DOMAINS)
const spec: WorldSpec = { dns_ip: '127.1.255.1', latency: { banner_ms: 20, reply_ms: 2 }, max_sessions: 8, greylist_ms: 0, domains: [] }
const truth: string[] = []
for (let d = 0; d < DOMAINS; d++) {
  const name = `list-bench-${String(d).padStart(3, '0')}.com`
  const mailboxes: WorldSpec['domains'][number]['mailboxes'] = {}
  for (let i = 0; i < perDomain; i++) {
    const r = rand()
    mailboxes[`p${i}`] = r < 0.75 ? 'exists' : r < 0.95 ? 'missing' : 'full'
  }
  spec.domains.push({ name, mx_host: `mx.${name}`, mx_ip: `127.1.${Math.floor(d / 250)}.${(d % 250) + 1}`, kind: 'normal', mailboxes })
}
const expected = (email: string): string => {
  const [local, domain] = email.split('@')
  const box = spec.domains[Number(domain.slice(11, 14))].mailboxes[local]
  return box === 'exists' ? 'valid' : box === 'missing' ? 'invalid' : 'risky'
}
writeFileSync(join(dir, 'world.json'), JSON.stringify(spec))

// The list: 10 columns, the address ninth; every 50th row repeats an earlier address. Written as a stream.
const input = join(dir, 'crm-export.csv')
{
  const out = createWriteStream(input)
  out.write('id,first_name,last_name,company,title,phone,city,country,email,created_at\n')
  let n = 0
  for (let row = 0; row < ROWS; row++) {
    const k = row % 50 === 49 && n > 0 ? Math.floor(rand() * n) : n++
    const email = `p${Math.floor(k / DOMAINS)}@list-bench-${String(k % DOMAINS).padStart(3, '0')}.com`
    if (truth.length < 20_000) truth.push(email)
    const line = `${row},Given${row % 997},"Family, ${row % 883}",Company ${row % 5_003} Ltd,Buyer,+33 1 ${String(row).padStart(8, '0')},Lyon,FR,${email},2026-0${(row % 9) + 1}-1${row % 9}\n`
    if (!out.write(line)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'close')
}
log(`list-file bench: ${ROWS} rows written`)

const world: ChildProcess = fork(new URL('./world.ts', import.meta.url).pathname, [join(dir, 'world.json')], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
const dns = await new Promise<string>((resolve, reject) => {
  world.once('exit', code => reject(new Error(`world exited with ${code}`)))
  world.stdout!.on('data', (b: Buffer) => {
    const m = /ready (\S+)/.exec(b.toString())
    if (m) resolve(m[1])
  })
})
const svc = await startBenchService({
  VERIFIER_DNS_SERVERS: dns,
  VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
  VERIFIER_HELO_NAME: 'bench.verifier.example',
  VERIFIER_SMTP_TIMEOUT_MS: '10000',
  VERIFIER_MAX_SESSIONS_PER_MX: '8',
  VERIFIER_MAX_SESSIONS: '1600'
})
let summary: Record<string, any>
let peakKb = 0
try {
  const { key } = await svc.account('lists@bench.example.com', 'business', ROWS * 12)
  const out = join(dir, 'crm-export-verified.csv')
  const child = spawn(process.execPath, [cli, 'verify-file', input, '--out', out, '--checks', 'syntax,dns,smtp'], {
    env: { ...process.env, SVC_API_URL: svc.url, SVC_API_KEY: key, SVC_PROGRESS: '1' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString()
  })
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString()
    const line = b.toString().trim().split('\n').at(-1)
    if (line && /\d+%/.test(line)) process.stderr.write(`\r${line.slice(0, 120)}`)
  })
  // The kernel's high-water mark of the CLI's resident memory, read until it exits.
  const probe = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
      if (m) peakKb = Math.max(peakKb, Number(m[1]))
    } catch {}
  }, 100)
  const t0 = performance.now()
  const [code] = (await once(child, 'exit')) as [number | null]
  clearInterval(probe)
  const wall = performance.now() - t0
  process.stderr.write('\n')
  if (code !== 0) throw new Error(`verify-file exited with ${code}: ${stderr.slice(-800)}`)
  summary = { ...JSON.parse(stdout), wall_ms: Math.round(wall) }
  // The output: every row, in order, the first 20,000 against the world's ground truth.
  let rows = 0
  let wrong = 0
  const parser = createReadStream(out).pipe(parse({ from_line: 2 }))
  for await (const r of parser as AsyncIterable<string[]>) {
    if (Number(r[0]) !== rows) throw new Error(`row ${rows} out of order (${r[0]})`)
    if (rows < truth.length && r[8] === truth[rows] && r[10] !== expected(r[8])) wrong++
    rows++
  }
  summary.rows_back = rows
  summary.wrong_in_sample = wrong
} finally {
  svc.stop()
  world.kill()
  rmSync(dir, { recursive: true, force: true })
}
const t = summary.timings_ms as { read: number; estimate: number; verify: number; write: number }
const result = {
  rows: ROWS,
  unique: summary.unique,
  rows_back: summary.rows_back,
  wrong_in_sample: summary.wrong_in_sample,
  cli_peak_rss_mib: Math.round(peakKb / 1024),
  timings_ms: t,
  merge_over_verify: Number((t.write / t.verify).toFixed(3)),
  file_round_trip_over_verify: Number(((t.read + t.write) / t.verify).toFixed(3)),
  goals: { cli_peak_rss_mib: 300, merge_over_verify: 0.2 }
}
if (args.json) console.log(JSON.stringify(result))
else {
  console.log(`list file: ${ROWS.toLocaleString('en')} rows × 10 columns through svc verify-file (${result.unique.toLocaleString('en')} unique addresses)`)
  console.log(
    `  every row back, in order: ${result.rows_back === ROWS ? 'yes' : `NO (${result.rows_back})`}; verdicts off the world's ground truth in a 20,000-row sample: ${result.wrong_in_sample}`
  )
  console.log(`  CLI peak resident memory: ${result.cli_peak_rss_mib} MiB (goal < 300)`)
  console.log(
    `  phases: read ${(t.read / 1000).toFixed(1)} s, verify ${(t.verify / 1000).toFixed(1)} s, write ${(t.write / 1000).toFixed(1)} s: the merge adds ${(result.merge_over_verify * 100).toFixed(1)}% to the batch's time (goal < 20%), reading and merging ${(result.file_round_trip_over_verify * 100).toFixed(1)}%`
  )
}
