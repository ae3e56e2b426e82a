// Benchmark: what a durable commit costs. The event store
// syncs its WAL at every group commit (`synchronous = FULL`); this runs N group commits of
// PAR concurrent appends on the embedded store as shipped and with the sync turned off
// (`NORMAL`, what it was), interleaved rounds on one disk, and prints appends per second,
// the commit's latency (p50, p99) and the CPU per commit of each.
// Usage: node bench/durability.ts [--commits 1000] [--concurrent 16] [--rounds 3] [--json]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { SqliteEventStore } from '../src/infra/eventstore/sqlite.ts'

const { values: args } = parseArgs({
  options: {
    commits: { type: 'string', default: '1000' },
    concurrent: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false }
  }
})
const N = Number(args.commits)
const PAR = Number(args.concurrent)
const dir = mkdtempSync(join(tmpdir(), 'bench-durability-'))

interface Figures {
  appends_per_s: number
  p50_ms: number
  p99_ms: number
  cpu_ms_per_commit: number
}

async function measure(mode: 'FULL' | 'NORMAL', round: number): Promise<Figures> {
  const store = new SqliteEventStore(join(dir, `${mode}-${round}.db`), { poll_interval_ms: 0 })
  // The store as shipped is FULL; NORMAL is set on its connection for the comparison.
  if (mode === 'NORMAL') (store as unknown as { db: { exec(sql: string): void } }).db.exec('PRAGMA synchronous = NORMAL')
  const latencies: number[] = []
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < N; i++) {
    const at = performance.now()
    await Promise.all(
      Array.from({ length: PAR }, (_, j) =>
        store.append(`s-${i}-${j}`, [{ type: 'Measured', data: { i, j, pad: 'x'.repeat(200) }, metadata: { occurred_at: new Date().toISOString() } }], {
          expected_revision: 'no_stream'
        })
      )
    )
    latencies.push(performance.now() - at)
  }
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  await store.close()
  latencies.sort((a, b) => a - b)
  return {
    appends_per_s: Math.round((N * PAR) / (wall / 1000)),
    p50_ms: Number(latencies[Math.floor(N / 2)].toFixed(2)),
    p99_ms: Number(latencies[Math.floor(N * 0.99)].toFixed(2)),
    cpu_ms_per_commit: Number(((used.user + used.system) / 1000 / N).toFixed(3))
  }
}

const rounds: Record<'FULL' | 'NORMAL', Figures[]> = { FULL: [], NORMAL: [] }
for (let r = 0; r < Number(args.rounds); r++) {
  for (const mode of r % 2 === 0 ? (['NORMAL', 'FULL'] as const) : (['FULL', 'NORMAL'] as const)) rounds[mode].push(await measure(mode, r))
}
rmSync(dir, { recursive: true, force: true })
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const summary = Object.fromEntries(
  (['FULL', 'NORMAL'] as const).map(mode => [
    mode.toLowerCase(),
    Object.fromEntries((Object.keys(rounds[mode][0]) as Array<keyof Figures>).map(k => [k, median(rounds[mode].map(f => f[k]))]))
  ])
)
if (args.json) console.log(JSON.stringify(summary))
else {
  console.log(`durability: ${N} group commits of ${PAR} appends, median of ${args.rounds} interleaved rounds`)
  for (const [mode, f] of Object.entries(summary)) console.log(`  ${mode.padEnd(6)} ${JSON.stringify(f)}`)
}
