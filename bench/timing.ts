// Timing side channels: no usable timing
// difference between present and absent accounts. Moved out of `npm test` (no test
// asserts a time): run alone, on a quiet machine, since anything sharing the cores adds
// more noise than the 0.1 ms it measures. Each figure is a comparison of two cases in one
// run (a ratio or a median difference within interleaved pairs), never a wall-clock value.
// Usage: node bench/timing.ts [--json]
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { request, Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values: args } = parseArgs({ options: { json: { type: 'boolean', default: false } } })
const log = (line: string): void => {
  process.stderr.write(`${line}\n`)
}
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-timing-'))
const { NATS_URL: _nats, ...inherited } = process.env
// The service in a process of its own: work it does after an answer must not share an event loop with the client that times it.
const child = spawn(process.execPath, [new URL('../src/cli.ts', import.meta.url).pathname, 'serve'], {
  env: {
    ...inherited,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    SIGNUP_SCREENING: 'lists',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
    REGISTRATIONS_PER_HOUR_PER_CLIENT: '10000',
    REGISTRATIONS_PER_HOUR_PER_DOMAIN: '10000'
  },
  stdio: ['ignore', 'pipe', 'inherit']
})
const base = await new Promise<string>((resolve, reject) => {
  let out = ''
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString()
    const m = /"url":"(http:\/\/[^"]+)"/.exec(out)
    if (m) resolve(m[1])
  })
  child.once('exit', code => {
    reject(new Error(`svc serve exited with ${code}`))
  })
})
const { port } = new URL(base)
const agent = new Agent({ keepAlive: true })

/** POSTs JSON from loopback address `from` (a client of its own for the per-client throttles) and resolves with the status once the whole answer has arrived. */
function post(path: string, body: unknown, from = '127.0.0.1'): Promise<number> {
  const data = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        localAddress: from,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
      },
      res => {
        res.resume()
        res.on('end', () => {
          resolve(res.statusCode ?? 0)
        })
      }
    )
    req.on('error', reject)
    req.end(data)
  })
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}
const pace = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
async function timed(statuses: number[], fn: () => Promise<number>): Promise<number> {
  const t0 = performance.now()
  statuses.push(await fn())
  return performance.now() - t0
}
const password = 'correct horse battery staple'
/** Registers and confirms `email` (the code read from the outbox). */
async function signUp(email: string): Promise<void> {
  await post('/api/auth/register', { email, password, locale: 'en' })
  let code: string | null = null
  for (let i = 0; i < 200 && code === null; i++) {
    for (const f of readdirSync(join(dataDir, 'outbox'), { withFileTypes: true })) {
      const text = f.isFile() ? readFileSync(join(dataDir, 'outbox', f.name), 'utf8') : ''
      if (text.includes(`To: ${email}`)) code = /code is (\d{6})/.exec(text)?.[1] ?? null
    }
    if (code === null) await pace(25)
  }
  if ((await post('/api/auth/confirm', { email, code })) !== 200) throw new Error(`could not confirm ${email}`)
}

interface Figure {
  name: string
  value: number
  goal: string
  met: boolean
  detail: string
}
const figures: Figure[] = []
try {
  await signUp('present@example.com')

  // login: wrong password for a present account vs an absent one (both pay one argon2 verification).
  log('timing: login…')
  const present: number[] = []
  const absent: number[] = []
  const statuses: number[] = []
  for (let round = 0; round < 4; round++) {
    const email = `present${round}@example.com`
    const from = `127.0.0.${10 + round}`
    await signUp(email)
    for (let i = 0; i < 4; i++) {
      present.push(await timed(statuses, () => post('/api/auth/login', { email, password: `wrong ${i}` }, from)))
      absent.push(await timed(statuses, () => post('/api/auth/login', { email: `absent${round}-${i}@example.com`, password: `wrong ${i}` }, from)))
    }
  }
  const [mp, ma] = [median(present), median(absent)]
  const ratio = Math.max(mp, ma) / Math.min(mp, ma)
  figures.push({
    name: 'login: present / absent account, median ratio',
    value: Math.round(ratio * 1000) / 1000,
    goal: '< 1.5',
    met: ratio < 1.5 && new Set(statuses).size === 1 && statuses[0] === 401,
    detail: `present ${mp.toFixed(1)} ms, absent ${ma.toFixed(1)} ms; statuses ${[...new Set(statuses)].join(', ')}`
  })

  // The "same 204" operations: known vs unknown address, interleaved pairs (the order
  // alternating; paced longer than the work done after an answer).
  const compare = async (
    name: string,
    known: (i: number) => Promise<number>,
    unknown: (i: number) => Promise<number>,
    rounds = 151,
    paceMs = 40
  ): Promise<void> => {
    log(`timing: ${name}…`)
    const a: number[] = []
    const b: number[] = []
    const st: number[] = []
    for (let i = 0; i < rounds; i++) {
      for (const side of i % 2 === 0 ? ['known', 'unknown'] : ['unknown', 'known']) {
        if (side === 'known') a.push(await timed(st, () => known(i)))
        else b.push(await timed(st, () => unknown(i)))
        await pace(paceMs)
      }
    }
    const paired = median(a.map((x, i) => x - b[i]))
    const apart = Math.abs(median(a) - median(b))
    const all204 = st.every(s => s === 204)
    figures.push({
      name: `${name}: median difference within known/unknown pairs (ms)`,
      value: Math.round(paired * 1000) / 1000,
      goal: '|x| < 0.1',
      met: Math.abs(paired) < 0.1 && all204,
      detail: `known ${median(a).toFixed(3)} ms, unknown ${median(b).toFixed(3)} ms (${apart.toFixed(3)} apart)${all204 ? '' : '; not every answer was 204'}`
    })
  }
  await post('/api/auth/register', { email: 'pending@example.com', password, locale: 'en' })
  await compare(
    'register',
    () => post('/api/auth/register', { email: 'present@example.com', password, locale: 'en' }),
    i => post('/api/auth/register', { email: `newcomer${i}@example.com`, password, locale: 'en' }),
    301,
    60
  )
  await compare(
    'forgot-password',
    () => post('/api/auth/forgot-password', { email: 'present@example.com' }),
    i => post('/api/auth/forgot-password', { email: `nobody${i}@example.com` })
  )
  await compare(
    'resend-confirmation',
    () => post('/api/auth/resend-confirmation', { email: 'pending@example.com' }),
    i => post('/api/auth/resend-confirmation', { email: `nobody${i}@example.com` })
  )
} finally {
  agent.destroy()
  child.kill('SIGTERM')
  await new Promise(resolve => child.once('exit', resolve))
  rmSync(dataDir, { recursive: true, force: true })
}
if (args.json) console.log(JSON.stringify({ figures }))
else
  console.log(
    `timing side channels (goal: no usable difference between present and absent accounts):\n${figures.map(f => `  ${f.met ? '✓' : '✗'} ${f.name}: ${f.value} (goal ${f.goal}) — ${f.detail}`).join('\n')}`
  )
// Missed goals are shown (✗); the run itself succeeds, as every benchmark of npm run bench.
