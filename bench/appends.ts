// Benchmark: appends a second on the embedded store (SQLite) and on PostgreSQL, in one run,
// interleaved rounds: N group commits of PAR concurrent appends (each a new stream, one event
// of about 300 characters), as the command handler's group commit makes them; appends per
// second, the group's latency (p50, p99) and this process's CPU per append. PostgreSQL is the
// local server (POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres), on a
// database made for the run and dropped after; without a server its figures say so. Then, on
// PostgreSQL, how long another process takes to see an append: by polling alone, and with
// LISTEN/NOTIFY.
// Usage: node bench/appends.ts [--commits 500] [--concurrent 16] [--rounds 3] [--json]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { SqliteEventStore } from '../src/infra/eventstore/sqlite.ts'
import { PostgresEventStore } from '../src/infra/eventstore/postgres.ts'
import type { EventStore } from '../src/ports/event-store.ts'

const { values: args } = parseArgs({
  options: {
    commits: { type: 'string', default: '500' },
    concurrent: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false }
  }
})
const N = Number(args.commits)
const PAR = Number(args.concurrent)
const ROUNDS = Number(args.rounds)
const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const dir = mkdtempSync(join(tmpdir(), 'bench-appends-'))

interface Figures {
  appends_per_s: number
  p50_ms: number
  p99_ms: number
  cpu_us_per_append: number
}

async function measure(store: EventStore, prefix: string): Promise<Figures> {
  const latencies: number[] = []
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < N; i++) {
    const at = performance.now()
    await Promise.all(
      Array.from({ length: PAR }, (_, j) =>
        store.append(`${prefix}-${i}-${j}`, [{ type: 'Measured', data: { i, j, pad: 'x'.repeat(250) }, metadata: { occurred_at: new Date().toISOString() } }], {
          expected_revision: 'no_stream'
        })
      )
    )
    latencies.push(performance.now() - at)
  }
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  latencies.sort((a, b) => a - b)
  return {
    appends_per_s: Math.round((N * PAR) / (wall / 1000)),
    p50_ms: Number(latencies[Math.floor(N / 2)].toFixed(2)),
    p99_ms: Number(latencies[Math.floor(N * 0.99)].toFixed(2)),
    cpu_us_per_append: Math.round((used.user + used.system) / (N * PAR))
  }
}

/**
 * How long another instance (its own pool, as another process would have) takes to see an
 * append: `n` appends one at a time, each waited for by the follower's subscription. @returns the delays' p50 and p99, ms.
 */
async function follow(url: string, schema: string, notify: boolean, n = 100): Promise<{ p50_ms: number; p99_ms: number }> {
  const writer = new PostgresEventStore(url, { schema, notify })
  const follower = new PostgresEventStore(url, { schema, notify })
  const seen = new Map<number, number>()
  let wake: (() => void) | null = null
  const sub = follower.subscribeToAll({ from_position: 0 }, e => {
    seen.set(e.position, performance.now())
    wake?.()
  })
  const delays: number[] = []
  for (let i = 0; i < n; i++) {
    const r = await writer.append(`follow-${notify}-${i}`, [{ type: 'Measured', data: { i }, metadata: { occurred_at: new Date().toISOString() } }], {
      expected_revision: 'no_stream'
    })
    const at = performance.now()
    while (!seen.has(r.position)) await new Promise<void>(resolve => (wake = resolve))
    delays.push(Math.max(0, seen.get(r.position)! - at))
  }
  await sub.stop()
  await writer.close()
  await follower.close()
  delays.sort((a, b) => a - b)
  return { p50_ms: Number(delays[Math.floor(n / 2)].toFixed(1)), p99_ms: Number(delays[Math.floor(n * 0.99)].toFixed(1)) }
}

const median = (xs: Figures[]): Figures => {
  const pick = (k: keyof Figures): number => xs.map(x => x[k]).sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  return { appends_per_s: pick('appends_per_s'), p50_ms: pick('p50_ms'), p99_ms: pick('p99_ms'), cpu_us_per_append: pick('cpu_us_per_append') }
}

const database = `svc_bench_appends_${process.pid}`
let postgresUrl: string | null = null
const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2_000 })
try {
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  const u = new URL(POSTGRES_URL)
  u.pathname = `/${database}`
  postgresUrl = u.toString()
} catch {
  postgresUrl = null
}

const sqlite: Figures[] = []
const postgres: Figures[] = []
/** PostgreSQL: how long another process takes to see an append, by its 100 ms poll alone and with LISTEN/NOTIFY. */
let following: { poll: { p50_ms: number; p99_ms: number }; notify: { p50_ms: number; p99_ms: number } } | null = null
try {
  for (let r = 0; r < ROUNDS; r++) {
    const s = new SqliteEventStore(join(dir, `round-${r}.db`), { poll_interval_ms: 0 })
    sqlite.push(await measure(s, `r${r}`))
    await s.close()
    if (postgresUrl) {
      const p = new PostgresEventStore(postgresUrl, { schema: `round_${r}` })
      postgres.push(await measure(p, `r${r}`))
      await p.close()
    }
  }
  if (postgresUrl) {
    following = { poll: await follow(postgresUrl, 'follow_poll', false), notify: await follow(postgresUrl, 'follow_notify', true) }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
  if (postgresUrl) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {})
  await admin.end().catch(() => {})
}

const out = {
  commits: N,
  concurrent: PAR,
  rounds: ROUNDS,
  sqlite: median(sqlite),
  postgres: postgresUrl ? median(postgres) : null,
  postgres_following: following
}
if (args.json) console.log(JSON.stringify(out))
else {
  console.log(`appends: ${N} group commits of ${PAR} concurrent appends, median of ${ROUNDS} interleaved rounds`)
  const line = (name: string, f: Figures | null): string =>
    f
      ? `  ${name.padEnd(10)} ${f.appends_per_s} appends/s, a group's p50 ${f.p50_ms} ms, p99 ${f.p99_ms} ms, ${f.cpu_us_per_append} µs of this process's CPU an append`
      : `  ${name.padEnd(10)} not measured: no PostgreSQL answers at ${POSTGRES_URL}`
  console.log(line('sqlite', out.sqlite))
  console.log(line('postgres', out.postgres))
  if (following)
    console.log(
      `  another process sees an append on PostgreSQL after p50 ${following.poll.p50_ms} ms, p99 ${following.poll.p99_ms} ms by its 100 ms poll; p50 ${following.notify.p50_ms} ms, p99 ${following.notify.p99_ms} ms with LISTEN/NOTIFY`
    )
}
