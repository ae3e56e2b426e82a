// Benchmark: intake of a 1,000,000-address batch through the HTTP API (the service's resident memory stays under 500 MiB). `svc serve` runs in a
// process of its own; an account on the Business plan sends the list in chunks of 50,000
// (the plan's per-request cap) with the local checks only (syntax, typo, role, free: no
// network, no cost), so the service takes in, de-duplicates, verifies and records every
// item while the chunks arrive. Prints intake and completion times, addresses per second,
// and the service's peak resident memory, sampled every 50 ms from /proc.
// Usage: node bench/batch-intake.ts [--addresses 1000000] [--chunk 50000] [--json]
import { parseArgs } from 'node:util'
import { rssMb, startBenchService } from './bulk-api.ts'

const { values: args } = parseArgs({
  options: { addresses: { type: 'string', default: '1000000' }, chunk: { type: 'string', default: '50000' }, json: { type: 'boolean', default: false } }
})
const N = Number(args.addresses)
const CHUNK = Number(args.chunk)
const LIMIT_MIB = 500

const svc = await startBenchService({})
let peak = 0
const sampler = setInterval(() => {
  try {
    peak = Math.max(peak, rssMb(svc.child.pid!))
  } catch {}
}, 50)
try {
  const { key } = await svc.account('intake@bench.example.com', 'business', 0)
  const idle = rssMb(svc.child.pid!)
  const address = (i: number): string => `customer.${i.toString(36)}@domain-${i % 5_000}.example.com`
  const chunk = (k: number): string[] => Array.from({ length: Math.min(CHUNK, N - k * CHUNK) }, (_, j) => address(k * CHUNK + j))
  const checks = ['syntax', 'typo', 'role', 'free']
  const t0 = performance.now()
  const first = await svc.api('POST', '/api/batches', { emails: chunk(0), checks, final: N <= CHUNK }, key)
  const chunks = Math.ceil(N / CHUNK)
  for (let k = 1; k < chunks; k++) {
    await svc.api('POST', `/api/batches/${first.uuid}/emails`, { emails: chunk(k), final: k === chunks - 1 }, key)
    if (!args.json) process.stderr.write(`\rintake: ${Math.min(N, (k + 1) * CHUNK)} of ${N} addresses, RSS ${rssMb(svc.child.pid!)} MiB (peak ${peak})   `)
  }
  const intakeMs = performance.now() - t0
  let b: any
  for (;;) {
    b = await svc.api('GET', `/api/batches/${first.uuid}`, undefined, key)
    if (b.status === 'completed') break
    if (!args.json) process.stderr.write(`\rverifying: ${b.progress.processed} of ${b.progress.total}, RSS ${rssMb(svc.child.pid!)} MiB (peak ${peak})   `)
    await new Promise(resolve => setTimeout(resolve, 250))
  }
  const doneMs = performance.now() - t0
  if (!args.json) process.stderr.write('\n')
  const summary = {
    addresses: N,
    chunk: CHUNK,
    chunks,
    unique: b.progress.total,
    intake_ms: Math.round(intakeMs),
    intake_per_s: Math.round((N / intakeMs) * 1000),
    completed_ms: Math.round(doneMs),
    completed_per_s: Math.round((N / doneMs) * 1000),
    idle_rss_mib: idle,
    peak_rss_mib: peak,
    under_500_mib: peak < LIMIT_MIB
  }
  if (args.json) console.log(JSON.stringify(summary))
  else {
    console.log(`batch intake: ${N} addresses in ${chunks} chunks of ${CHUNK} through the HTTP API (local checks)`)
    console.log(`  intake ${summary.intake_ms} ms (${summary.intake_per_s}/s); completed after ${summary.completed_ms} ms (${summary.completed_per_s}/s)`)
    console.log(`  service resident memory: ${idle} MiB idle, ${peak} MiB at peak`)
    console.log(`  ${summary.under_500_mib ? 'met   ' : 'MISSED'} peak resident memory under ${LIMIT_MIB} MiB`)
  }
} finally {
  clearInterval(sampler)
  svc.stop()
}
