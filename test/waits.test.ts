import t from 'tap'
import { startMailWorld } from './support/mail-world.ts'
import { client, signUp } from './support/service.ts'
import { npmStartNodeFlags, startSvc } from './support/processes.ts'
import { waitUntil } from './support/eventstore-contract.ts'
import { SqliteEventStore } from '../src/infra/eventstore/sqlite.ts'
import { join } from 'node:path'

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
const svc = await startSvc(t, ['serve'], { ...inherited, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SIGNUP_SCREENING: 'lists', METRICS_TOKEN, VERIFIER_DNS_SERVERS: world.dns_server, VERIFIER_ALLOW_PRIVATE_TARGETS: 'true', VERIFIER_SMTP_TIMEOUT_MS: '30000', VERIFIER_HELO_NAME: 'verifier.test.example' }, npmStartNodeFlags())
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

t.test('wait=10: the answer comes within 100 ms of the job\'s completion', async t => {
  for (const path of ['/api/verify', '/api/jobs']) {
    const uuid = await submit(`someone${path.length}@prompt-answer.com`)
    const r = await api('GET', `${path}/${uuid}?wait=10`, { token: key })
    const arrived = Date.now()
    t.equal(r.status, 200)
    t.equal(r.body.status, 'completed', `${path}: the job had ended when the answer came`)
    t.equal(r.body.verdict, 'valid')
    const completed = (await store.readStream(`job-${uuid}`)).find(e => e.type === 'JobCompleted')!
    const lag = arrived - Date.parse(completed.metadata.occurred_at)
    t.ok(lag >= 0 && lag < 100, `${path}: answered ${lag} ms after JobCompleted was stored`)
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

t.test('1,000 concurrent waits cost a few MiB at most', async t => {
  const uuid = await submit('many@slow-answer.com')
  const gc = async (): Promise<number> => { for (let i = 0; i < 3; i++) await fetch(`${svc.url}/healthz`); return await metric('nodejs_heap_size_used_bytes') }
  const before = await gc()
  // With the session (a key's plan rate limit would refuse most of 1,000 requests at once).
  const pending = Array.from({ length: 1_000 }, async () => await api('GET', `/api/verify/${uuid}?wait=8`, { token }))
  await waitUntil(async () => await metric('http_waits_pending') >= 1_000, 20_000)
  const during = await metric('nodejs_heap_size_used_bytes')
  const grew = (during - before) / 1_048_576
  t.comment(`heap used: ${(before / 1_048_576).toFixed(1)} MiB before, ${(during / 1_048_576).toFixed(1)} MiB with 1,000 reads waiting (+${grew.toFixed(1)} MiB, including their 1,000 HTTP connections)`)
  t.ok(grew < 12, `1,000 waiting reads and their connections: +${grew.toFixed(1)} MiB`)
  const answers = await Promise.all(pending)
  t.same([...new Set(answers.map(a => a.status))], [200], 'each answered')
  t.equal(await metric('http_waits_pending'), 0, 'and none is left waiting')
})
