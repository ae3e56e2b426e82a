import t from 'tap'
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitUntil } from '../../support/eventstore-contract.ts'
import { client, signUp } from '../../support/service.ts'
import { npmStartNodeFlags, startSvc, svcEnv } from '../../support/processes.ts'
import { startLoopProbe } from '../../support/loop-probe.ts'
import { plansFile } from '../../support/plans.ts'

// The largest chunk a plan accepts, on the event loop's thread: 50,000 addresses in a 12 MB body (the Business plan's chunk) kept
// /healthz waiting 1.5 s. The service runs as `npm start` runs it; the account's plan takes
// Business's chunk and batch sizes (a plans file), its test key sends the chunk, and a
// separate process asks /healthz every 25 ms from the request until the batch has every
// result (parsing, sealing, the append, the sandbox's verification, the read models). The
// oracles: the probe's longest wait, the batch read back (every address, every result).
const dataDir = t.testdir()
const PLANS_FILE = plansFile(dataDir, { free: { max_chunk_size: 50_000, max_batch_size: 1_000_000, rate_limit_per_minute: 100_000 } })
const tempDir = mkdtempSync(join(tmpdir(), 'big-chunks-tmp-'))
t.teardown(() => rmSync(tempDir, { recursive: true, force: true }))
const svc = await startSvc(t, ['serve'], svcEnv(dataDir, { PLANS_FILE, PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000', TMPDIR: tempDir }), npmStartNodeFlags())
const api = client(svc.url)
const token = await signUp(api, dataDir, 'big-chunks@example.com')
const key = (await api('POST', '/api/keys', { token, body: { name: 'sandbox', environment: 'test' } })).body.raw_key as string

/**
 * The service's open descriptors but sockets (keep-alive connections come and go) and the
 * stores' own files (the WAL checkpointer's connections open at its first tick): threads'
 * event loops and pipes, any other file.
 */
const descriptors = (): number =>
  readdirSync(`/proc/${svc.child.pid}/fd`).filter(f => {
    try {
      const target = readlinkSync(`/proc/${svc.child.pid}/fd/${f}`)
      return !target.startsWith('socket:') && !/\.db(-wal|-shm)?$/.test(target)
    } catch {
      return false
    }
  }).length

t.test('a 50,000-address chunk of 12 MB is taken and verified without holding /healthz 500 ms', async t => {
  // A small batch first, to its end: the stores' threads a first write starts are running when the level is read.
  const warm = await api('POST', '/api/batches', { token: key, body: { emails: ['valid@warm-up.example.com'], final: true } })
  t.equal(warm.status, 202)
  t.equal((await api('GET', `/api/batches/${warm.body.uuid}?wait=30`, { token: key })).body.status, 'completed')
  const before = descriptors()
  // Long addresses, as a list of them may hold: a 64-octet local part (RFC 5321 §4.5.3.1.1) and a long domain.
  const domain = `${Array.from({ length: 12 }, (_, k) => `department-${k}`).join('.')}.example.com`
  const emails = Array.from({ length: 50_000 }, (_, i) => `${`first.middle.last.${i}.`.padEnd(63, 'x')}z@${i % 7}.${domain}`)
  const body = JSON.stringify({ emails, final: true })
  t.ok(body.length > 11_000_000, `${body.length} bytes`)
  const probe = await startLoopProbe(`${svc.url}/healthz`)
  let seen: Awaited<ReturnType<typeof probe.stop>>
  let done: any
  try {
    const r = await api('POST', '/api/batches', { token: key, raw: body })
    t.equal(r.status, 202, JSON.stringify(r.body).slice(0, 300))
    t.equal(r.body.chunk.accepted, 50_000)
    for (let round = 0; round < 40; round++) {
      done = (await api('GET', `/api/batches/${r.body.uuid}?wait=30`, { token: key })).body
      if (done.status === 'completed') break
    }
  } finally {
    seen = await probe.stop()
  }
  t.equal(done.status, 'completed', 'the batch has every result')
  t.equal(done.progress.processed, 50_000)
  t.ok(seen.samples > 20, `the probe answered ${seen.samples} times (positive control)`)
  t.equal(seen.failures, 0, 'no probe failed')
  t.ok(seen.maxWaitMs < 500, `/healthz never waited 500 ms (longest ${seen.maxWaitMs} ms)`)
  t.equal(svc.child.exitCode, null, 'the service is alive')
  // The body's parsing thread ends 10 s after its last body; its event loop's descriptors go with it.
  await waitUntil(() => descriptors() <= before, 20_000).catch(() => {})
  t.ok(descriptors() <= before, `descriptors (sockets aside) back to ${before}: ${descriptors()}`)
  t.same(readdirSync(tempDir), [], 'nothing in the temporary directory')
})
