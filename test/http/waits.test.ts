import t from 'tap'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp } from '../support/service.ts'
import { npmStartNodeFlags, startSvc } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { CompletionWaits } from '../../src/http/waits.ts'
import { unlimitedRates } from '../support/plans.ts'

// Answers without polling: `?wait=` on a job and a
// batch answers as soon as it ends, or when the wait is over, with a small constant of
// memory per waiting read. The service runs as `npm start` runs it. The mail world holds
// the RCPT reply of each address of held-one.com and held-two.com until the test releases
// it (one held reply holds its session: two jobs held at once go to two domains), so every oracle
// is an order of things, never a clock: which answer came first, what the job's state was,
// and the service's own /metrics (heap used, reads waiting). Its service lets one account
// hold 1,000 waiting reads, without rate limits (the caps themselves are
// test/security/availability/wait-flood.test.ts's). This file owns 127.0.103.0/24.
const gates = new Map<string, PromiseWithResolvers<void>>()
/** Holds the RCPT reply for `address` until `release(address)` (other addresses, a catch-all probe's, pass). */
const hold = (address: string): string => {
  gates.set(address, Promise.withResolvers<void>())
  return address
}
const release = (address: string): void => gates.get(address)?.resolve()
const world = await startMailWorld({
  dns_ip: '127.0.103.1',
  domains: [
    { name: 'prompt-answer.com', mx: [{ preference: 10, exchange: 'mx.prompt-answer.com' }] },
    { name: 'held-one.com', mx: [{ preference: 10, exchange: 'mx.held-one.com' }] },
    { name: 'held-two.com', mx: [{ preference: 10, exchange: 'mx.held-two.com' }] }
  ],
  hosts: [
    { name: 'mx.prompt-answer.com', ip: '127.0.103.2', rcpt: () => ({ code: 250, message: '2.1.5 OK' }), rcpt_delay_ms: 1_500 },
    { name: 'mx.held-one.com', ip: '127.0.103.3', rcpt: () => ({ code: 250, message: '2.1.5 OK' }), rcpt_hold: address => gates.get(address)?.promise },
    { name: 'mx.held-two.com', ip: '127.0.103.4', rcpt: () => ({ code: 250, message: '2.1.5 OK' }), rcpt_hold: address => gates.get(address)?.promise }
  ]
})
t.teardown(() => {
  for (const g of gates.values()) g.resolve()
  return world.close()
})
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
    VERIFIER_SMTP_PORT: String(world.smtp_port),
    VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
    VERIFIER_SMTP_TIMEOUT_MS: '30000',
    VERIFIER_HELO_NAME: 'verifier.test.example',
    WAITS_PER_ACCOUNT: '1000',
    ...unlimitedRates(dataDir)
  },
  npmStartNodeFlags()
)
const api = client(svc.url)
const token = await signUp(api, dataDir, 'waiter@example.com')
const key = (await api('POST', '/api/keys', { token, body: { name: 'waits', environment: 'live' } })).body.raw_key as string
const metric = async (name: string): Promise<number> => {
  const text = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
  return Number(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[2] ?? NaN)
}
const submit = async (email: string): Promise<string> => (await api('POST', '/api/verify', { token: key, body: { email, checks: ['smtp'] } })).body.uuid
/** Resolves once the mail world has been asked RCPT for `address`: the job is in its SMTP session. */
const asked = async (address: string): Promise<void> => await waitUntil(() => world.transcript.some(l => l.endsWith(`RCPT TO:<${address}>`)), 20_000)
/** A read that records where it came in the order of answers. */
const answers: string[] = []
const read = async (label: string, path: string): Promise<Awaited<ReturnType<typeof api>>> => {
  const r = await api('GET', path, { token: key })
  answers.push(label)
  return r
}
/** Resolves once the service counts at least `n` reads waiting (its /metrics). */
const waiting = async (n: number): Promise<void> => await waitUntil(async () => (await metric('http_waits_pending')) >= n, 20_000)

t.test("wait=10: the answer comes at the job's completion, not at the wait's end", async t => {
  for (const path of ['/api/verify', '/api/jobs']) {
    answers.length = 0
    const [early, late] = [hold(`early${path.length}@held-one.com`), hold(`late${path.length}@held-two.com`)]
    const [earlyUuid, lateUuid] = [await submit(early), await submit(late)]
    await Promise.all([asked(early), asked(late)])
    // The control: a read of another held job, begun first with the same wait. Had the
    // answer below come at its wait's end, this one (begun earlier) would have come first.
    const control = read('control', `${path}/${earlyUuid}?wait=10`)
    await waiting(1)
    const answer = read('answer', `${path}/${lateUuid}?wait=10`)
    await waiting(2)
    release(late)
    const r = await answer
    t.equal(r.status, 200)
    t.equal(r.body.status, 'completed', `${path}: the job had ended when the answer came`)
    t.equal(r.body.verdict, 'valid')
    t.same(answers, ['answer'], `${path}: it came while a read begun earlier with the same wait was still waiting`)
    release(early)
    const c = await control
    t.equal(c.body.status, 'completed', 'the control, released, ends too')
  }
})

t.test('wait=2 on a job still running: its state once the wait is over, a shorter wait first', async t => {
  answers.length = 0
  const address = hold('running@held-one.com')
  const uuid = await submit(address)
  await asked(address)
  const two = read('wait=2', `/api/verify/${uuid}?wait=2`)
  await waiting(1)
  const one = read('wait=1', `/api/verify/${uuid}?wait=1`)
  await waiting(2)
  const now = await read('no wait', `/api/verify/${uuid}`)
  t.equal(now.body.status, 'queued', 'without wait: the state at once')
  const [r2, r1] = await Promise.all([two, one])
  t.same(answers, ['no wait', 'wait=1', 'wait=2'], 'each answered as its wait ran out: none waits for the job, a longer wait answers later')
  t.same([r1.status, r1.body.status, r2.status, r2.body.status], [200, 'queued', 200, 'queued'], 'each with the state as it was: still running')
  t.equal(await metric('http_waits_pending'), 0, 'none is left waiting')
  const bad = await api('GET', `/api/verify/${uuid}?wait=31`, { token: key })
  t.equal(bad.status, 400, 'more than 30 s is a 400')
  release(address)
})

t.test('a batch: wait answers when it is completed', async t => {
  const b = await api('POST', '/api/batches', { token: key, body: { emails: ['a@prompt-answer.com', 'b@prompt-answer.com'], checks: ['smtp'], final: true } })
  t.equal(b.status, 202)
  const r = await api('GET', `/api/batches/${b.body.uuid}?wait=15`, { token: key })
  t.equal(r.body.status, 'completed')
  t.equal(r.body.progress.processed, 2)
})

t.test('1,000 concurrent waits over HTTP: each waits, each is answered', async t => {
  const uuid = await submit(hold('many@held-two.com'))
  t.teardown(() => release('many@held-two.com'))
  const before = await metric('nodejs_heap_size_used_bytes')
  // With the session, on this file's service: 1,000 waits of one account allowed, no rate limit.
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
  const waits = new CompletionWaits(source, { per_account: 1_000, per_process: 1_000 })
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
        'account',
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
  const outcomes = await Promise.all(all)
  t.same(new Set(outcomes.map(o => o.refused)), new Set([null]), 'none was refused: the caps allowed 1,000')
  t.equal(waits.pending, 0, 'a cancelled read leaves nothing behind')
})
