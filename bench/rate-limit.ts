// Benchmark: the cost of a rate-limit count per request, measured in one run: the in-process counter of the embedded
// default against the NATS JetStream key-value counter that several `svc api` processes
// share, each one request at a time (latency) and 64 at a time on one credential (the
// compare-and-set contention of a burst), and over 100,000 distinct credentials (memory
// and cost do not grow with them: one entry per credential and window).
// Usage: node bench/rate-limit.ts [--requests 5000] [--json]
import { parseArgs } from 'node:util'
import { randomUUID } from 'node:crypto'
import { InProcessRateCounter, type RateCounter } from '../src/ports/rate-limit.ts'
import { NatsKvRateCounter } from '../src/infra/ratelimit/nats-kv.ts'
import { natsAnswers } from '../src/infra/bus/nats.ts'

const { values: args } = parseArgs({ options: { requests: { type: 'string', default: '5000' }, json: { type: 'boolean', default: false } } })
const REQUESTS = Number(args.requests)
const WINDOW = 60_000
const log = (msg: string): void => {
  process.stderr.write(`${msg}\n`)
}
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const r3 = (x: number): number => Math.round(x * 1000) / 1000
const us = (ms: number): number => Math.round(ms * 1000)

interface Run {
  p50_us: number
  p99_us: number
  per_s: number
}

async function sequential(c: RateCounter, keys: (i: number) => string, n = REQUESTS): Promise<Run> {
  const lat: number[] = []
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const s = performance.now()
    await c.hit(keys(i), WINDOW)
    lat.push(performance.now() - s)
  }
  return { p50_us: us(pct(lat, 50)), p99_us: us(pct(lat, 99)), per_s: Math.round((n / (performance.now() - t0)) * 1000) }
}

async function burst(c: RateCounter, key: string, concurrency: number): Promise<Run & { counted: number }> {
  const lat: number[] = []
  const counts: number[] = []
  const t0 = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < REQUESTS) {
        next++
        const s = performance.now()
        counts.push((await c.hit(key, WINDOW)).count)
        lat.push(performance.now() - s)
      }
    })
  )
  // Every request counted once: the counts are exactly 1..n (no lost or doubled update).
  const sorted = counts.sort((a, b) => a - b)
  if (!sorted.every((n, i) => n === sorted[0] + i)) throw new Error('a count was lost or doubled')
  return { p50_us: us(pct(lat, 50)), p99_us: us(pct(lat, 99)), per_s: Math.round((counts.length / (performance.now() - t0)) * 1000), counted: counts.length }
}

const out: Record<string, unknown> = { requests: REQUESTS }
{
  const c = new InProcessRateCounter()
  log('rate limit: in-process counter…')
  const rss0 = process.memoryUsage().rss
  out.in_process = {
    one_key: await sequential(c, () => 'key_a'),
    distinct_keys_100k: await sequential(c, i => `key_${i}`, 100_000),
    burst_64: await burst(c, `key_${randomUUID()}`, 64),
    rss_growth_mib: Math.round((process.memoryUsage().rss - rss0) / 1048576)
  }
  await c.close()
}
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'
if (await natsAnswers(natsUrl)) {
  log('rate limit: NATS key-value counter…')
  const c = await NatsKvRateCounter.connect(natsUrl, { prefix: `bench_${randomUUID().slice(0, 8)}`, max_window_ms: WINDOW })
  out.nats_kv = {
    one_key: await sequential(c, () => 'key_a'),
    distinct_keys: await sequential(c, i => `key_${i}`),
    burst_64: await burst(c, `key_${randomUUID()}`, 64)
  }
  await c.close()
  const a = out.in_process as Record<string, Run>
  const b = out.nats_kv as Record<string, Run>
  out.nats_over_in_process_p50 = r3(b.one_key.p50_us / Math.max(1, a.one_key.p50_us))
  out.nats_burst_over_sequential_throughput = r3(b.burst_64.per_s / b.one_key.per_s)
} else {
  out.nats_kv = `no NATS server at ${natsUrl}`
}
if (args.json) console.log(JSON.stringify(out))
else console.log(`rate limit (per request, ${REQUESTS} requests):\n${JSON.stringify(out, null, 2)}`)
