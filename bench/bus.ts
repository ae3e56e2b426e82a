// Benchmark: events relayed per second from the event store through the in-process bus and
// through NATS JetStream (the local server; skipped when none answers): the relay's publish
// rate (goal for NATS: 20,000 events/s), and one consumer's
// receive rate, measured in one run on the same SQLite store of N events.
// Usage: node bench/bus.ts [--events 50000] [--json]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { SqliteEventStore } from '../src/infra/eventstore/sqlite.ts'
import { InProcessBus } from '../src/infra/bus/in-process.ts'
import { NatsBus, natsAnswers } from '../src/infra/bus/nats.ts'
import type { Bus } from '../src/ports/bus.ts'
import { Relay } from '../src/eventsourcing/relay.ts'

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '50000' }, json: { type: 'boolean', default: false } } })
const N = Number(args.events)
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'

const dir = mkdtempSync(join(tmpdir(), 'bench-bus-'))
const store = new SqliteEventStore(join(dir, 'events.db'))
const batch = 500
for (let i = 0; i < N; i += batch) {
  const events = Array.from({ length: Math.min(batch, N - i) }, (_, k) => ({
    type: 'JobQueued',
    data: { job_uuid: randomUUID(), n: i + k },
    metadata: { occurred_at: new Date().toISOString() }
  }))
  await store.append(`job-bench-${i}`, events, { expected_revision: 'no_stream' })
}

const head = await store.headPosition()

/**
 * The relay alone (every event accepted by the bus: stored by JetStream, or handled by the
 * in-process consumers), then with a consumer receiving them (delivered).
 */
async function measure(name: string, bus: Bus): Promise<{ bus: string; events: number; wall_ms: number; events_per_s: number; published_per_s: number }> {
  // Published: the relay's checkpoint (in memory; it is written every 100 ms) covers the last event (no consumer on a durable bus).
  const checkpoints = { getCheckpoint: async () => 0, setCheckpoint: async () => {} }
  let received = 0
  let done!: () => void
  const delivered = new Promise<void>(resolve => {
    done = resolve
  })
  const consumeNow = name === 'in-process'
  const early = consumeNow
    ? await bus.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 256 }, async () => {
        if (++received === N) done()
      })
    : null
  const relay = new Relay(store, bus, checkpoints, { name: `bench-${name}`, event_types: ['JobQueued'] })
  const t0 = performance.now()
  await relay.start()
  while (relay.checkpoint < head) await new Promise(resolve => setImmediate(resolve))
  const publishWall = performance.now() - t0
  await relay.stop()
  // Delivered: a consumer draining what was published (NATS), or the same run (in-process).
  const t1 = performance.now()
  const consumer =
    early ??
    (await bus.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 256 }, async () => {
      if (++received === N) done()
    }))
  await delivered
  const deliverWall = consumeNow ? publishWall : performance.now() - t1
  await consumer.stop()
  return {
    bus: name,
    events: N,
    wall_ms: Math.round(deliverWall),
    events_per_s: Math.round((N / deliverWall) * 1000),
    published_per_s: Math.round((N / publishWall) * 1000)
  }
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

const summary = {
  events: N,
  results,
  nats_vs_in_process: results.length === 2 ? Math.round((results[1].events_per_s / results[0].events_per_s) * 100) / 100 : null,
  relay_to_nats_at_least_20000_per_s: results.length === 2 ? results[1].published_per_s >= 20_000 : null
}
if (args.json) console.log(JSON.stringify(summary))
else {
  console.log(`bus: ${N} events relayed from the SQLite event store to one consumer`)
  for (const r of results)
    console.log(
      `  ${r.bus.padEnd(12)} relay publishes ${String(r.published_per_s).padStart(7)} events/s; one consumer receives ${String(r.events_per_s).padStart(7)} events/s`
    )
  const nats = results.find(r => r.bus === 'nats')
  if (nats) console.log(`  ${nats.published_per_s >= 20_000 ? 'met   ' : 'MISSED'} relay to NATS JetStream at least 20,000 events/s`)
  if (!reachable) console.log(`  nats: no server answers at ${natsUrl}; skipped`)
  else console.log(`  NATS relays at ${summary.nats_vs_in_process}× the in-process rate (it persists each event and acknowledges each delivery)`)
}
