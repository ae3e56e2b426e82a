// The production topology on one machine, as separate OS processes on the local NATS server:
// `svc api` (one or more), `svc projector` (optional), `svc relay`, `svc worker verifier` ×2,
// `svc worker webhooks` (a job.completed notification per job to a loopback receiver) and
// `svc worker mailer` (the sign-up mail), on the store the caller's environment names. 200
// addresses end to end, spread over the APIs; a verifier SIGKILLed mid-run loses nothing and
// charges nothing twice (the oracle: the store's events, read by the caller); SIGTERM stops
// every role with exit 0.
import type { Test } from 'tap'
import { execFile, type ChildProcess } from 'node:child_process'
import { promisify } from 'node:util'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startMailWorld } from './mail-world.ts'
import { client, confirmationCode } from './service.ts'
import { waitUntil } from './eventstore-contract.ts'
import { startSvc, svcEnv, type SvcProcess } from './processes.ts'
import { unlimitedRates } from './plans.ts'
import { NatsBus } from '../../src/infra/bus/nats.ts'
import { ROUTES } from '../../src/main.ts'

/** An event as the oracle reads it from the store. */
interface StoredEvent {
  stream: string
  type: string
  data: Record<string, unknown>
}

export interface TopologyOptions {
  /** The loopback /24 the caller owns (`127.0.50`): the mail world's DNS and MX there. */
  net: string
  /** The NATS server. */
  nats_url: string
  /** The store's settings (DATABASE_URL, …) over the topology's own. */
  env: NodeJS.ProcessEnv
  /** `svc api` processes. */
  apis: number
  /** Whether a `svc projector` runs beside the APIs (which then follow its checkpoints, or take over its lease). */
  projector: boolean
  /** Every event of the store, in order (the test's oracle). */
  events(dataDir: string): Promise<StoredEvent[]>
}

/** Runs the topology's subtests in `t`. */
export async function runTopology(t: Test, o: TopologyOptions): Promise<void> {
  const natsUrl = o.nats_url
  const run = promisify(execFile)
  const cli = new URL('../../src/cli.ts', import.meta.url).pathname
  const world = await startMailWorld({
    dns_ip: `${o.net}.1`,
    domains: [{ name: 'multi-proc.com', mx: [{ preference: 10, exchange: 'mx.multi-proc.com' }] }],
    hosts: [
      {
        name: 'mx.multi-proc.com',
        ip: `${o.net}.2`,
        rcpt_delay_ms: 15,
        rcpt: a => (/^ok\d+@/.test(a) ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' })
      }
    ]
  })
  t.teardown(() => world.close())

  const dataDir = t.testdir()
  const prefix = `mp_${randomUUID().slice(0, 8)}`
  const env = svcEnv(dataDir, {
    NATS_URL: natsUrl,
    NATS_PREFIX: prefix,
    NATS_ACK_WAIT_MS: '2000',
    VERIFIER_DNS_SERVERS: world.dns_server,
    VERIFIER_SMTP_PORT: String(world.smtp_port),
    VERIFIER_SMTP_TIMEOUT_MS: '2000',
    // The mail world is on loopback: the probe may connect there.
    VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
    VERIFIER_MAX_SESSIONS_PER_MX: '4',
    VERIFIER_CONCURRENCY: '8',
    VERIFIER_RESULT_CACHE_TTL_S: '0',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...unlimitedRates(dataDir),
    ...o.env
  })
  const notified: Array<{ job_uuid: string; delivery: string }> = []
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', c => {
      body += c
    })
    req.on('end', () => {
      notified.push({ job_uuid: JSON.parse(body).job_uuid, delivery: String(req.headers['x-service-delivery']) })
      res.end()
    })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    receiver.close()
  })
  const children: ChildProcess[] = []
  const start = async (...args: string[]): Promise<SvcProcess> => {
    const p = await startSvc(t, args, env)
    children.push(p.child)
    return p
  }
  t.teardown(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM')
    await Promise.all(children.map(c => (c.exitCode !== null || c.signalCode !== null ? null : new Promise(resolve => c.once('exit', resolve)))))
    const admin = await NatsBus.connect(natsUrl, { prefix, routes: ROUTES })
    await admin.destroy()
    await admin.close()
  })

  const apis: SvcProcess[] = []
  for (let i = 0; i < o.apis; i++) apis.push(await start('api'))
  if (o.projector) await start('projector')
  await start('relay')
  const verifier1 = await start('worker', 'verifier')
  const verifier2 = await start('worker', 'verifier')
  const webhooks = await start('worker', 'webhooks')
  await start('worker', 'mailer')
  const http = client(apis[0].url)
  /** The API process of the i-th request: round robin, as a load balancer spreads them. */
  const spread = (i: number) => client(apis[i % apis.length].url)

  t.test('every role answers health and readiness', async t => {
    for (const c of [...apis, verifier1, verifier2, webhooks]) {
      t.same(await fetch(`${c.url}/healthz`).then(r => r.json()), { status: 'ok' })
      await waitUntil(async () => (await fetch(`${c.url}/readyz`)).status === 200)
    }
  })

  t.test('200 addresses end to end through the processes; a verifier killed mid-run loses nothing, charges nothing twice', async t => {
    await http('POST', '/api/auth/register', { body: { email: 'ops@example.com', password: 'a long enough password', locale: 'en' } })
    const code = await confirmationCode(dataDir, 'ops@example.com')
    const token = (await http('POST', '/api/auth/confirm', { body: { email: 'ops@example.com', code } })).body.access_token
    await run(process.execPath, [cli, 'wallet', 'grant', '--email', 'ops@example.com', '--tokens', '5000', '--reason', 'load test'], { env })
    await waitUntil(async () => (await http('GET', '/api/wallet', { token })).body.balance === 6000)
    const key = (await http('POST', '/api/keys', { token, body: { name: 'load', environment: 'live' } })).body.raw_key
    const hook = await http('POST', '/api/webhooks', {
      token,
      body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['job.completed'] }
    })
    t.equal(hook.status, 201)
    const jobs: Array<{ uuid: string; email: string }> = []
    for (let i = 0; i < 200; i++) {
      const email = i % 4 === 3 ? `nobody${i}@multi-proc.com` : `ok${i}@multi-proc.com`
      const r = await spread(i)('POST', '/api/verify', { token: key, body: { email } })
      if (r.status !== 202) t.fail(`submit ${i}: ${r.status}`)
      jobs.push({ uuid: r.body.uuid, email })
    }
    const completed = async (): Promise<number> => {
      let n = 0
      for (const [i, j] of jobs.entries()) if ((await spread(i + 1)('GET', `/api/verify/${j.uuid}`, { token: key })).body.status === 'completed') n++
      return n
    }
    await waitUntil(async () => (await completed()) >= 40, 60_000)
    verifier1.child.kill('SIGKILL')
    t.comment('verifier 1 killed with SIGKILL')
    await waitUntil(async () => (await completed()) === 200, 120_000)
    for (const j of jobs) {
      const job = (await http('GET', `/api/verify/${j.uuid}`, { token: key })).body
      const want = j.email.startsWith('ok') ? 'valid' : 'invalid'
      if (job.verdict !== want) t.fail(`${j.email}: ${job.verdict}/${job.reason}`)
    }

    // Settlement follows completion; a job completed by the killed worker but not settled
    // is settled when its message comes back to the survivor.
    await waitUntil(async () => (await http('GET', '/api/wallet', { token })).body.reserved === 0, 60_000)
    const all = await o.events(dataDir)
    let completedTwice = 0
    for (const j of jobs) if (all.filter(e => e.stream === `job-${j.uuid}` && e.type === 'JobCompleted').length !== 1) completedTwice++
    t.equal(completedTwice, 0, 'each job completed exactly once')
    const settlements = new Map<string, number>()
    for (const e of all) {
      if (e.type !== 'TokensCaptured') continue
      const job = e.data.job_uuid as string
      settlements.set(job, (settlements.get(job) ?? 0) + 1)
    }
    t.equal(settlements.size, 200, 'every job was charged')
    t.ok(
      [...settlements.values()].every(n => n === 1),
      'no job was charged twice'
    )
    const w = (await http('GET', '/api/wallet', { token })).body
    t.equal(w.spent, 2000, '200 full verifications at 10 tokens')
    t.equal(w.balance, 4000)

    // The webhook worker (its own process, reading endpoints from the event store) notified each job once.
    await waitUntil(() => new Set(notified.map(n => n.job_uuid)).size === 200, 60_000)
    // Positive control: one more job's notification has come through the same processes.
    const control = (await http('POST', '/api/verify', { token: key, body: { email: 'control@multi-proc.com' } })).body.uuid as string
    await waitUntil(() => notified.some(n => n.job_uuid === control), 60_000)
    const ours = notified.filter(n => n.job_uuid !== control)
    t.equal(ours.length, 200, 'one notification per job')
    t.same(new Set(ours.map(n => n.job_uuid)), new Set(jobs.map(j => j.uuid)))
    const requested = (await o.events(dataDir)).filter(e => e.type === 'WebhookDeliveryRequested')
    t.equal(requested.filter(e => e.data.job_uuid !== control).length, 200, 'one delivery requested per job')
  })

  t.test('SIGTERM: every role stops gracefully and exits 0', async t => {
    const alive = children.filter(c => c.exitCode === null && c.signalCode === null)
    const exits = alive.map(c => new Promise<number | null>(resolve => c.once('exit', code => resolve(code))))
    for (const c of alive) c.kill('SIGTERM')
    t.same(
      await Promise.all(exits),
      alive.map(() => 0)
    )
  })
}
