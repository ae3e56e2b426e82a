import type { Test } from 'tap'
import { join } from 'node:path'
import { cpSync, mkdirSync } from 'node:fs'
import { client, confirmationCode, outboxMailsTo, signUp } from './service.ts'
import { exited, startSvc, type SvcProcess, svcEnv } from './processes.ts'
import { waitUntil } from './eventstore-contract.ts'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'
import { unlimitedRates } from './plans.ts'

/** A reservation and what settled it. */
export interface Held {
  job: string
  amount: number
  captured: number
  released: number
  reasons: string[]
}

const cli = new URL('../../src/cli.ts', import.meta.url).pathname

/**
 * The seed of the crash suites (test/e2e/fault-injection*.test.ts): `svc serve` on a fresh
 * DATA_DIR with an account, a key, an unconfirmed registration, extra sessions, an account
 * holding one of each thing an erasure ends, and an e-mail change mailed; then stopped. Each
 * fault point runs on a copy of it (`copyFor`), four at a time, a crash and a restart of a
 * process of its own (`crashUnanswered`); `reservations` and `everything` read the stored
 * streams the oracles sum.
 */
export async function crashSeed(t: Test) {
  const root = t.testdir()
  const dataDir = join(root, 'seed')
  mkdirSync(dataDir, { recursive: true })
  const rates = unlimitedRates(dataDir)
  const STRIPE_SECRET = 'whsec_fault_injection_suite'
  const base = svcEnv(dataDir, {
    ...rates,
    STRIPE_SECRET_KEY: 'sk_test_fault_injection_suite',
    STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
    // Never called by a webhook's handling; nothing answers there.
    STRIPE_API_URL: 'http://127.0.0.1:9',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true'
  })

  const stop = async (p: SvcProcess): Promise<void> => {
    p.child.kill('SIGTERM')
    await exited(p.child)
  }

  const setup = await startSvc(t, ['serve'], base)
  const first = client(setup.url)
  const token = await signUp(first, dataDir, 'faults@example.com')
  const owner = (await first('GET', '/api/users/me', { token })).body.uuid as string
  const key = (await first('POST', '/api/keys', { token, body: { name: 'crash', environment: 'live' } })).body.raw_key as string
  // An account registered and not confirmed yet, with its code: the flows that start at confirmation.
  const unconfirmed = { email: 'confirming@example.com', password: 'correct horse battery staple' }
  if ((await first('POST', '/api/auth/register', { body: { ...unconfirmed, locale: 'en' } })).status !== 204) throw new Error('register')
  const code = await confirmationCode(dataDir, unconfirmed.email)
  // Two more sessions of the first account (the one `token` names is kept by its own password change).
  for (let i = 0; i < 2; i++) {
    const r = await first('POST', '/api/auth/login', { body: { email: 'faults@example.com', password: 'correct horse battery staple' } })
    if (r.status !== 200) throw new Error(`login: ${r.status}`)
  }
  // An account with something of each kind an erasure ends: a session, an API key, an agent, a webhook endpoint.
  const erased = { email: 'erased@example.com', password: 'correct horse battery staple' }
  const erasedToken = await signUp(first, dataDir, erased.email)
  const erasedUser = (await first('GET', '/api/users/me', { token: erasedToken })).body.uuid as string
  for (const [path, body] of [
    ['/api/keys', { name: 'erased', environment: 'live' }],
    ['/api/agents', { name: 'erased', scopes: ['results:read'] }],
    ['/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['job.completed'] }]
  ] as const) {
    const r = await first('POST', path, { token: erasedToken, body })
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`)
  }
  // A change of the first account's address, asked for and mailed: its link is opened at a fault point.
  if (
    (await first('PATCH', `/api/users/${owner}/email`, { token, body: { new_email: 'moved@example.com', current_password: 'correct horse battery staple' } }))
      .status !== 204
  )
    throw new Error('email change')
  await waitUntil(() => outboxMailsTo(dataDir, 'moved@example.com').some(m => m.includes('verify-email-change')))
  const emailLink = (() => {
    const mail = outboxMailsTo(dataDir, 'moved@example.com').find(m => m.includes('verify-email-change'))!
    const body = mail.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
    return decodeURIComponent(/verify-email-change\?token=(\S+)/.exec(body)![1])
  })()
  const sidOf = (jwt: string): string => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')).sid
  await stop(setup)

  // Each fault point runs on a copy of this data (one account, one key), several at once:
  // each is a crash and a restart of a process of its own.
  t.jobs = 4

  /** A copy of the seed for the case of `point`, and the event store's file opened for the oracles. */
  function copyFor(t: Test, point: string): { dir: string; env: Record<string, string>; store: SqliteEventStore } {
    const dir = join(root, point)
    cpSync(dataDir, dir, { recursive: true })
    const store = new SqliteEventStore(join(dir, 'events.db'), { poll_interval_ms: 0 })
    t.teardown(() => store.close())
    return { dir, env: { ...base, DATA_DIR: dir }, store }
  }

  /** Starts `svc serve` set to die at `point`, makes `request` of it, and checks that it died there (SIGKILL) before answering. */
  async function crashUnanswered(
    t: Test,
    env: Record<string, string>,
    point: string,
    request: (api: ReturnType<typeof client>) => Promise<unknown>,
    what: string
  ): Promise<void> {
    const crashing = await startSvc(t, ['serve'], { ...env, FAULT_POINT: point })
    const answered = await request(client(crashing.url)).catch(() => null)
    t.equal((await exited(crashing.child)).signal, 'SIGKILL', 'the process died at the fault point')
    t.equal(answered, null, what)
  }

  /** Every reservation of the wallet stream and what settled it, summed from the raw events. */
  function reservations(wallet: RecordedEvent[]): Map<string, Held> {
    const held = new Map<string, Held>()
    for (const e of wallet) {
      const id = String(e.data.reservation_uuid ?? e.data.job_uuid)
      if (e.type === 'TokensReserved') held.set(id, { job: String(e.data.job_uuid), amount: Number(e.data.amount), captured: 0, released: 0, reasons: [] })
      const r = held.get(id)
      if (!r) continue
      if (e.type === 'TokensCaptured') r.captured += Number(e.data.amount)
      if (e.type === 'TokensReleased') {
        r.released += Number(e.data.amount)
        r.reasons.push(String(e.data.reason))
      }
    }
    return held
  }

  /** Every event of the store, in order. */
  async function everything(store: SqliteEventStore): Promise<RecordedEvent[]> {
    const all: RecordedEvent[] = []
    for (let from = 0; ; ) {
      const page = await store.readAll({ from_position: from, max_count: 1_000 })
      if (page.length === 0) return all
      all.push(...page)
      from = page[page.length - 1].position
    }
  }
  return {
    cli,
    rates,
    root,
    dataDir,
    base,
    STRIPE_SECRET,
    stop,
    first,
    token,
    owner,
    key,
    unconfirmed,
    code,
    erased,
    erasedToken,
    erasedUser,
    emailLink,
    sidOf,
    copyFor,
    crashUnanswered,
    reservations,
    everything
  }
}
