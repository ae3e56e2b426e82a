import t from 'tap'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp } from '../support/service.ts'
import { npmStartNodeFlags, startSvc } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { CompletionWaits } from '../../src/http/waits.ts'

// Answers without polling (issue "The interface exact", item 4): `?wait=` on a job and a
// batch answers as soon as it ends, or when the wait is over, with a small constant of
// memory per waiting read. The service runs as `npm start` runs it; the mail world answers
// RCPT after a delay the test sets. The oracles: the time the job's JobCompleted event was
// stored (the event store read directly), the clocks of this client, and the service's own
// /metrics (heap used, reads waiting). This file owns 127.0.103.0/24.
const world = await startMailWorld({
  dns_ip: '127.0.103.1',
  domains: [
    { name: 'prompt-answer.com', mx: [{ preference: 10, exchange: 'mx.prompt-answer.com' }] },
    { name: 'slow-answer.com', mx: [{ preference: 10, exchange: 'mx.slow-answer.com' }] }
  ],
  hosts: [
    { name: 'mx.prompt-answer.com', ip: '127.0.103.2', rcpt: () => ({ code: 250, message: '2.1.5 OK' }), rcpt_delay_ms: 1_500 },
    { name: 'mx.slow-answer.com', ip: '127.0.103.3', rcpt: () => ({ code: 250, message: '2.1.5 OK' }), rcpt_delay_ms: 12_000 }
  ]
})
t.teardown(() => world.close())
const dataDir = t.testdir()
const METRICS_TOKEN = 'waits-test-metrics-token'
const { NATS_URL: _nats, ...inherited } = process.env
const svc = await startSvc(
  t,
  ['serve'],
  {
    ...inherited,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    SIGNUP_SCREENING: 'lists',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
    METRICS_TOKEN,
    VERIFIER_DNS_SERVERS: world.dns_server,
    VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
    VERIFIER_SMTP_TIMEOUT_MS: '30000',
    VERIFIER_HELO_NAME: 'verifier.test.example'
  },
  npmStartNodeFlags()
)
const api = client(svc.url)
const token = await signUp(api, dataDir, 'waiter@example.com')
const key = (await api('POST', '/api/keys', { token, body: { name: 'waits', environment: 'live' } })).body.raw_key as string
const store = new SqliteEventStore(join(dataDir, 'events.db'), { poll_interval_ms: 0 })
t.teardown(() => store.close())
const metric = async (name: string): Promise<number> => {
  const text = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
  return Number(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[2] ?? NaN)
}
const submit = async (email: string): Promise<string> => (await api('POST', '/api/verify', { token: key, body: { email, checks: ['smtp'] } })).body.uuid

t.test("wait=10: the answer comes at the job's completion, not at the wait's end", async t => {
  for (const path of ['/api/verify', '/api/jobs']) {
    const uuid = await submit(`someone${path.length}@prompt-answer.com`)
    const r = await api('GET', `${path}/${uuid}?wait=10`, { token: key })
    const arrived = Date.now()
    t.equal(r.status, 200)
    t.equal(r.body.status, 'completed', `${path}: the job had ended when the answer came`)
    t.equal(r.body.verdict, 'valid')
    const completed = (await store.readStream(`job-${uuid}`)).find(e => e.type === 'JobCompleted')!
    const lag = arrived - Date.parse(completed.metadata.occurred_at)
    // Well before the 10 s the wait allows (a loaded machine may take a second): the answer followed the completion.
    t.ok(lag >= 0 && lag < 5_000, `${path}: answered ${lag} ms after JobCompleted was stored`)
  }
})

t.test('wait=2 on a job still running: its state after about 2 s', async t => {
  const uuid = await submit('someone@slow-answer.com')
  const t0 = Date.now()
  const r = await api('GET', `/api/verify/${uuid}?wait=2`, { token: key })
  const took = Date.now() - t0
  t.equal(r.status, 200)
  t.equal(r.body.status, 'queued', 'still running')
  t.ok(took >= 1_900 && took < 3_500, `answered after ${took} ms`)
  const bad = await api('GET', `/api/verify/${uuid}?wait=31`, { token: key })
  t.equal(bad.status, 400, 'more than 30 s is a 400')
  const now = await api('GET', `/api/verify/${uuid}`, { token: key })
  t.equal(now.body.status, 'queued', 'without wait: at once')
})

t.test('a batch: wait answers when it is completed', async t => {
  const b = await api('POST', '/api/batches', { token: key, body: { emails: ['a@prompt-answer.com', 'b@prompt-answer.com'], checks: ['smtp'], final: true } })
  t.equal(b.status, 202)
  const r = await api('GET', `/api/batches/${b.body.uuid}?wait=15`, { token: key })
  t.equal(r.body.status, 'completed')
  t.equal(r.body.progress.processed, 2)
})

t.test('1,000 concurrent waits over HTTP: each waits, each is answered', async t => {
  const uuid = await submit('many@slow-answer.com')
  const before = await metric('nodejs_heap_size_used_bytes')
  // With the session (a key's plan rate limit would refuse most of 1,000 requests at once).
  const pending = Array.from({ length: 1_000 }, async () => await api('GET', `/api/verify/${uuid}?wait=8`, { token }))
  await waitUntil(async () => (await metric('http_waits_pending')) >= 1_000, 20_000)
  const grew = ((await metric('nodejs_heap_size_used_bytes')) - before) / 1_048_576
  // Without a forced collection this includes garbage and the 1,000 connections: a loose bound here, the waits' own cost below.
  t.comment(`heap used grew ${grew.toFixed(1)} MiB with 1,000 reads waiting (connections and uncollected garbage included)`)
  t.ok(grew < 48, 'nothing grows out of bounds')
  const answers = await Promise.all(pending)
  t.same([...new Set(answers.map(a => a.status))], [200], 'each answered')
  t.equal(await metric('http_waits_pending'), 0, 'and none is left waiting')
})

t.test('the waits themselves: 1,000 pending cost a few MiB at most (heap measured after a forced collection)', async t => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const source = { onApplied: () => {}, onAdvance: () => {}, leading: true }
  const waits = new CompletionWaits(source)
  const settle = (): number => {
    gc()
    gc()
    return process.memoryUsage().heapUsed
  }
  const before = settle()
  const controller = new AbortController()
  const all = Array.from(
    { length: 1_000 },
    async (_, i) =>
      await waits.until(
        `job-${i}`,
        60_000,
        async () => ({ status: 'queued' }),
        d => d.status !== 'queued',
        controller.signal
      )
  )
  await new Promise(resolve => setImmediate(resolve))
  t.equal(waits.pending, 1_000, '1,000 reads waiting')
  const per = (settle() - before) / 1_000
  t.ok(
    per * 1_000 < 4 * 1_048_576,
    `about ${Math.round(per)} bytes a waiting read, its promises and timer included (1,000: ${((per * 1_000) / 1_048_576).toFixed(2)} MiB, under 4 MiB)`
  )
  controller.abort()
  await Promise.all(all)
  t.equal(waits.pending, 0, 'a cancelled read leaves nothing behind')
})
