// Benchmark: events relayed per second from the event store to a consumer, through the
// in-process bus and through NATS JetStream (the local server; skipped when none
// answers), measured in one run on the same SQLite store of N events.
// Usage: node bench/bus.ts [--events 20000] [--json]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { SqliteEventStore } from '../src/infra/eventstore/sqlite.ts'
import { InProcessBus } from '../src/infra/bus/in-process.ts'
import { NatsBus, natsAnswers } from '../src/infra/bus/nats.ts'
import type { Bus } from '../src/infra/bus/port.ts'
import { Relay } from '../src/workers/relay.ts'

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '20000' }, json: { type: 'boolean', default: false } } })
const N = Number(args.events)
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'

const dir = mkdtempSync(join(tmpdir(), 'bench-bus-'))
const store = new SqliteEventStore(join(dir, 'events.db'))
const batch = 500
for (let i = 0; i < N; i += batch) {
  const events = Array.from({ length: Math.min(batch, N - i) }, (_, k) => ({ type: 'JobQueued', data: { job_uuid: randomUUID(), n: i + k }, metadata: { occurred_at: new Date().toISOString() } }))
  await store.append(`job-bench-${i}`, events, { expected_revision: 'no_stream' })
}

async function measure (name: string, bus: Bus): Promise<{ bus: string, events: number, wall_ms: number, events_per_s: number }> {
  let received = 0
  let done!: () => void
  const all = new Promise<void>(resolve => { done = resolve })
  const consumer = await bus.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 256 }, async () => { if (++received === N) done() })
  const relay = new Relay(store, bus, { getCheckpoint: async () => 0, setCheckpoint: async () => {} }, { name: `bench-${name}`, window: 1024, event_types: ['JobQueued'] })
  const t0 = performance.now()
  await relay.start()
  await all
  const wall = performance.now() - t0
  await relay.stop()
  await consumer.stop()
  return { bus: name, events: N, wall_ms: Math.round(wall), events_per_s: Math.round(N / wall * 1000) }
}

const results = [await measure('in-process', new InProcessBus())]
const reachable = await natsAnswers(natsUrl)
if (reachable) {
  const nats = await NatsBus.connect(natsUrl, { prefix: `bench_${randomUUID().slice(0, 8)}`, routes: { verifier: ['JobQueued'] }, log: () => {} })
  try {
    results.push(await measure('nats', nats))
  } finally {
    await nats.destroy()
    await nats.close()
  }
}
await store.close()
rmSync(dir, { recursive: true, force: true })

const summary = { events: N, results, nats_vs_in_process: results.length === 2 ? Math.round(results[1].events_per_s / results[0].events_per_s * 100) / 100 : null }
if (args.json) console.log(JSON.stringify(summary))
else {
  console.log(`bus: ${N} events relayed from the SQLite event store to one consumer`)
  for (const r of results) console.log(`  ${r.bus.padEnd(12)} ${String(r.wall_ms).padStart(6)} ms ${String(r.events_per_s).padStart(8)} events/s`)
  if (!reachable) console.log(`  nats: no server answers at ${natsUrl}; skipped`)
  else console.log(`  NATS relays at ${summary.nats_vs_in_process}× the in-process rate (it persists each event and acknowledges each delivery)`)
}
