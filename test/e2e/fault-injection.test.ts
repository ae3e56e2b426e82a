import t, { type Test } from 'tap'
import { join } from 'node:path'
import { cpSync, mkdirSync, readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import Stripe from 'stripe'
import { DatabaseSync } from 'node:sqlite'
import { client, confirmationCode, outboxMailsTo, signUp } from '../support/service.ts'
import { exited, startSvc, type SvcProcess, svcEnv } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'
import { unlimitedRates } from '../support/plans.ts'

const cli = new URL('../../src/cli.ts', import.meta.url).pathname

// Crash tests: `svc serve` is killed with SIGKILL at each
// step of a submission and of its settlement (FAULT_POINT), then started again. After
// the restart every token is accounted for — captured against a completed job or
// released — and the client's retry with the same Idempotency-Key gets one job. The
// oracle is the wallet and job streams as stored, summed here.

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

interface Held {
  job: string
  amount: number
  captured: number
  released: number
  reasons: string[]
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

// The steps, in the order a request meets them, and what a retry with the same key answers.
const POINTS: Array<[string, 200 | 202]> = [
  ['submit.after_seal', 202], // nothing was committed: the retry is a new submission
  ['submit.after_claim', 200], // the key names a job that never came: the retry finishes it
  ['submit.after_reserve', 200], // the reservation is the commit point: intake queues its job
  ['submit.after_queue', 200],
  ['intake.before_queue', 200],
  ['settle.after_complete', 200], // completed, not yet captured: settled after the restart
  ['settle.after_capture', 200]
]

for (const [point, retryStatus] of POINTS) {
  t.test(`SIGKILL at ${point}: after a restart every token is accounted for`, async t => {
    const { env, store } = copyFor(t, point)
    const crashing = await startSvc(t, ['serve'], { ...env, FAULT_POINT: point })
    const body = { email: `${point.replace('.', '-')}@mailinator.com`, checks: ['disposable'] }
    const headers = { 'idempotency-key': `crash-${point}` }
    const answered = await client(crashing.url)('POST', '/api/verify', { token: key, headers, body }).catch(() => null)
    t.equal((await exited(crashing.child)).signal, 'SIGKILL', 'the process died at the fault point')
    t.comment(answered ? `the request was answered ${answered.status} before the crash` : 'the request got no answer')
    // What the crash left (positive controls that the step was reached, not an earlier one).
    const left = [...reservations(await store.readStream(`wallet-${owner}`)).values()].filter(r => r.captured + r.released < r.amount)
    const jobOf = async (r: Held): Promise<string[]> => (await store.readStream(`job-${r.job}`)).map(e => e.type)
    if (point === 'submit.after_reserve') t.same(await jobOf(left[0]), [], 'left: a reservation whose job was never queued')
    if (point === 'settle.after_complete') t.same(await jobOf(left[0]), ['JobQueued', 'JobCompleted'], 'left: a completed job whose reservation is still open')
    if (point === 'submit.after_seal' || point === 'submit.after_claim') t.equal(left.length, 0, 'left: nothing reserved')

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    const retry = await api('POST', '/api/verify', { token: key, headers, body })
    t.equal(retry.status, retryStatus, `the client's retry with the same Idempotency-Key: ${retryStatus}`)
    if (answered?.status === 202) t.equal(retry.body.uuid, answered.body.uuid, 'the job the first answer named')

    const wallet = async (): Promise<RecordedEvent[]> => await store.readStream(`wallet-${owner}`)
    await waitUntil(async () => [...reservations(await wallet()).values()].every(r => r.captured + r.released === r.amount), 30_000)
    const held = reservations(await wallet())
    t.ok(
      [...held.values()].every(r => r.captured + r.released === r.amount),
      'every reservation is settled exactly: captured or released, never both beyond it'
    )
    for (const r of held.values()) {
      if (r.captured === 0) continue
      const completed = (await store.readStream(`job-${r.job}`)).filter(e => e.type === 'JobCompleted')
      if (completed.length !== 1 || completed[0].data.charge !== r.captured) t.fail(`capture of ${r.captured} without a completed job ${r.job} charging it`)
    }
    const mine = [...held.values()].filter(r => r.job === retry.body.uuid)
    t.equal(mine.filter(r => !r.reasons.includes('duplicate_reservation')).length, 1, 'the retried job is funded by one reservation')
    t.equal(
      mine.reduce((s, r) => s + r.captured, 0),
      1,
      'and charged once'
    )
    const queued = (await store.readStream(`job-${retry.body.uuid}`)).filter(e => e.type === 'JobQueued')
    t.equal(queued.length, 1, 'one job')
    const sums = [...held.values()].reduce((s, r) => s + r.captured, 0)
    // The read model follows the ledger (the capture was the worker's, not this request's): wait for it to catch up.
    let w: any
    await waitUntil(async () => {
      w = (await api('GET', '/api/wallet', { token: key })).body
      return w.spent === sums
    }, 20_000).catch(() => undefined)
    t.same([w.balance + w.reserved, w.spent], [1_000 - sums, sums], "the balance shown is the ledger's")
    await stop(restarted)
  })
}

// The flows that start at a confirmation: killed after UserConfirmed,
// the account must still get the Free plan's grant once the service runs again. The oracle:
// the wallet stream as stored (one TokensGranted `plan-free-initial` of the plan's tokens),
// and `svc audit --strict --ledger` (no flow begun and not finished; every balance the API
// shows, replayed from the wallet streams).
const CONFIRM_POINTS = ['confirm.after_confirm', 'confirm.after_grant']
for (const point of CONFIRM_POINTS) {
  t.test(`SIGKILL at ${point}: after a restart the account has its grant, once`, async t => {
    const { env, store } = copyFor(t, point)
    await crashUnanswered(
      t,
      env,
      point,
      api => api('POST', '/api/auth/confirm', { body: { email: unconfirmed.email, code } }),
      'the confirmation got no answer'
    )

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    const signedIn = await api('POST', '/api/auth/login', { body: unconfirmed })
    t.equal(signedIn.status, 200, 'the account was confirmed before the crash: its password signs in (positive control)')
    const user = (await api('GET', '/api/users/me', { token: signedIn.body.access_token })).body.uuid as string
    const grants = async (): Promise<RecordedEvent[]> =>
      (await store.readStream(`wallet-${user}`)).filter(e => e.type === 'TokensGranted' && e.data.grant_uuid === 'plan-free-initial')
    await waitUntil(async () => (await grants()).length > 0, 20_000).catch(() => undefined)
    const granted = await grants()
    t.equal(granted.length, 1, "the Free plan's grant, once")
    t.equal(granted[0]?.data.amount, 1_000, "of the plan's tokens")
    let wallet: any
    await waitUntil(async () => {
      wallet = (await api('GET', '/api/wallet', { token: signedIn.body.access_token })).body
      return wallet.balance === 1_000
    }, 10_000).catch(() => undefined)
    t.equal(wallet?.balance, 1_000, 'the wallet shows it')
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict', '--ledger'], { env, encoding: 'utf8' })
    t.equal(
      audit.status,
      0,
      `svc audit --strict --ledger: nothing begun and not finished, the ledger clean: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`
    )
  })
}

// The flow that ends sessions: killed after PasswordChanged, or after
// the first of two revocations, the other sessions open at the change must still end once
// the service runs again, the session the change was made from must stay, and a session
// started after the change must not be touched. The oracle: the session streams as stored
// (SessionStarted and SessionRevoked of the account's sessions), and `svc audit --strict`.
const SESSION_POINTS = ['sessions.after_change', 'sessions.after_revoke']
for (const point of SESSION_POINTS) {
  t.test(`SIGKILL at ${point}: after a restart every other session open at the change is revoked`, async t => {
    const { env, store } = copyFor(t, point)
    const sessionsOf = async (): Promise<{ started: string[]; revoked: Set<string> }> => {
      const all = await everything(store)
      const started = all.filter(e => e.type === 'SessionStarted' && e.data.user_uuid === owner).map(e => String(e.data.session_uuid))
      return { started, revoked: new Set(all.filter(e => e.type === 'SessionRevoked').map(e => String(e.data.session_uuid))) }
    }
    const before = await sessionsOf()
    const kept = sidOf(token)
    const others = before.started.filter(s => s !== kept && !before.revoked.has(s))
    t.equal(others.length, 2, 'two other sessions open before the change')

    await crashUnanswered(
      t,
      env,
      point,
      api =>
        api('PATCH', `/api/users/${owner}/password`, {
          token,
          body: { current_password: 'correct horse battery staple', new_password: 'an entirely new passphrase 42' }
        }),
      'the change got no answer'
    )

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    const fresh = await api('POST', '/api/auth/login', { body: { email: 'faults@example.com', password: 'an entirely new passphrase 42' } })
    t.equal(fresh.status, 200, 'the change was committed before the crash: the new password signs in (positive control)')
    let after = before
    await waitUntil(async () => {
      after = await sessionsOf()
      return others.every(s => after.revoked.has(s))
    }, 20_000).catch(() => undefined)
    t.same(
      others.filter(s => !after.revoked.has(s)),
      [],
      'every other session open at the change is revoked'
    )
    t.notOk(after.revoked.has(kept), 'the session the change was made from is not')
    t.notOk(after.revoked.has(sidOf(fresh.body.access_token)), 'nor the one started after the change')
    t.equal((await api('GET', '/api/users/me', { token })).status, 200, 'the kept session still works')
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict'], { env, encoding: 'utf8' })
    t.equal(audit.status, 0, `svc audit --strict: nothing begun and not finished: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`)
  })
}

// The flow that erases a deleted account: killed after UserDeleted or
// after any step of the erasure, the account must still end up with every credential
// ended, its address released and its data key destroyed once the service runs again (its
// sessions end with UserDeleted itself: the password signs in no more, and its access token
// reaches nothing). The oracles: the streams as stored (ApiKeyRevoked, AgentRevoked,
// WebhookEndpointDeleted, ClaimReleased of this account), keys.db read with SQLite itself
// (its data key row emptied), and `svc audit --strict`.
const DELETE_POINTS = ['delete.after_delete', ...['api_keys', 'agents', 'webhooks', 'release', 'shred'].map(s => `delete.after_${s}`)]
for (const point of DELETE_POINTS) {
  t.test(`SIGKILL at ${point}: after a restart the account is erased`, async t => {
    const { dir, env, store } = copyFor(t, point)
    await crashUnanswered(
      t,
      env,
      point,
      api => api('DELETE', `/api/users/${erasedUser}`, { token: erasedToken, body: { password: erased.password } }),
      'the deletion got no answer'
    )

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    t.equal((await api('POST', '/api/auth/login', { body: erased })).status, 401, 'the deletion was committed before the crash: the password signs in no more')
    t.equal((await api('GET', '/api/users/me', { token: erasedToken })).status, 401, 'its session reaches nothing')
    const erasure = (all: RecordedEvent[]) => ({
      key: all.some(e => e.type === 'ApiKeyRevoked' && e.data.user_uuid === erasedUser),
      agent: all.some(e => e.type === 'AgentRevoked' && e.data.user_uuid === erasedUser),
      webhook: all.some(e => e.type === 'WebhookEndpointDeleted' && e.data.user_uuid === erasedUser),
      released: all.some(e => e.type === 'ClaimReleased' && e.data.owner_uuid === erasedUser)
    })
    const shredded = (): boolean => {
      const db = new DatabaseSync(join(dir, 'keys.db'), { readOnly: true })
      try {
        const row = db.prepare('SELECT wrapped, destroyed_at FROM data_keys WHERE owner = ?').get(erasedUser) as
          | { wrapped: unknown; destroyed_at: string | null }
          | undefined
        return row !== undefined && row.wrapped === null && row.destroyed_at !== null
      } finally {
        db.close()
      }
    }
    const done = { key: true, agent: true, webhook: true, released: true }
    let seen = erasure([])
    await waitUntil(async () => {
      seen = erasure(await everything(store))
      return JSON.stringify(seen) === JSON.stringify(done) && shredded()
    }, 20_000).catch(() => undefined)
    t.same(seen, done, 'every key, agent and endpoint ended; the address released')
    t.ok(shredded(), 'the data key destroyed (keys.db)')
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict'], { env, encoding: 'utf8' })
    t.equal(audit.status, 0, `svc audit --strict: nothing begun and not finished: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`)
  })
}

// An operator's plan change grants the period's tokens from its event: `svc subscription set` killed after the plan started (before or after the grant),
// the grant must be there once the service runs again, once. The oracles: the plan
// catalogue file (the period's tokens) and the streams as stored (PlanStarted, and one
// TokensGranted `operator-<its id>`); then `svc audit --strict --ledger`.
const PLAN_POINTS = ['plan.after_change', 'plan.after_grant']
for (const point of PLAN_POINTS) {
  t.test(`SIGKILL at ${point} (svc subscription set): after a restart the period's tokens are granted, once`, async t => {
    const { env, store } = copyFor(t, point)
    const set = spawnSync(process.execPath, [cli, 'subscription', 'set', '--email', 'faults@example.com', '--plan', 'starter'], {
      env: { ...env, FAULT_POINT: point },
      encoding: 'utf8'
    })
    t.equal(set.signal, 'SIGKILL', 'the operator command died at the fault point')
    const started = (await store.readStream(`subscription-${owner}`)).filter(e => e.type === 'PlanStarted')
    t.equal(started.length, 1, 'the plan started before the crash (positive control)')
    const catalogue = JSON.parse(readFileSync(rates.PLANS_FILE, 'utf8')) as { plans: Array<{ code: string; tokens_per_month: number }> }
    const tokens = catalogue.plans.find(p => p.code === 'starter')?.tokens_per_month

    const restarted = await startSvc(t, ['serve'], env)
    const grants = async (): Promise<RecordedEvent[]> =>
      (await store.readStream(`wallet-${owner}`)).filter(e => e.type === 'TokensGranted' && String(e.data.grant_uuid).startsWith('operator-'))
    await waitUntil(async () => (await grants()).length > 0, 20_000).catch(() => undefined)
    const granted = await grants()
    t.equal(granted.length, 1, "the period's grant, once")
    t.equal(granted[0]?.data.grant_uuid, `operator-${started[0]?.id}`, 'named for the plan change')
    t.equal(granted[0]?.data.amount, tokens, "of the catalogue's monthly tokens")
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict', '--ledger'], { env, encoding: 'utf8' })
    t.equal(audit.status, 0, `svc audit --strict --ledger: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`)
  })
}

// The flow that releases the previous address: killed after
// EmailChanged or after the release, the old address must be released once the service
// runs again (the link, spent by the change, cannot finish it). The oracles: the new
// address signs in (the change was committed), a ClaimReleased of this account in the
// store, and `svc audit --strict`.
const EMAIL_POINTS = ['email.after_change', 'email.after_release']
for (const point of EMAIL_POINTS) {
  t.test(`SIGKILL at ${point}: after a restart the previous address is released`, async t => {
    const { env, store } = copyFor(t, point)
    const released = async (): Promise<number> => (await everything(store)).filter(e => e.type === 'ClaimReleased' && e.data.owner_uuid === owner).length
    t.equal(await released(), 0, 'nothing of this account released before')
    await crashUnanswered(t, env, point, api => api('POST', '/api/auth/verify-email-change', { body: { token: emailLink } }), 'the verification got no answer')

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    t.equal(
      (await api('POST', '/api/auth/login', { body: { email: 'moved@example.com', password: 'correct horse battery staple' } })).status,
      200,
      'the change was committed before the crash: the new address signs in (positive control)'
    )
    await waitUntil(async () => (await released()) > 0, 20_000).catch(() => undefined)
    t.equal(await released(), 1, 'the previous address released, once')
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict'], { env, encoding: 'utf8' })
    t.equal(audit.status, 0, `svc audit --strict: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`)
  })
}

// A Stripe event's effects come before its receipt: killed between
// the two, the event went unanswered, and Stripe delivers it again (it retries for three
// days an event not answered 2xx); the effect must then be there once. A paid top-up
// session is delivered, signed as Stripe signs, to a process that dies at
// `stripe.after_effects`, then again after the restart. The oracles: the catalogue file
// (the pack's tokens), the wallet and receipt streams as stored, `svc audit --strict --ledger`.
t.test('SIGKILL at stripe.after_effects: Stripe delivers again, the top-up is granted once', async t => {
  const point = 'stripe.after_effects'
  const { env, store } = copyFor(t, point)
  const catalogue = JSON.parse(readFileSync(rates.PLANS_FILE, 'utf8')) as { top_up: Array<{ quantity: number; tokens: number }> }
  const pack = catalogue.top_up[0]
  const session = `cs_test_${randomBytes(8).toString('hex')}`
  const payload = JSON.stringify({
    id: `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: '2025-09-30.clover',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'checkout.session.completed',
    data: {
      object: {
        id: session,
        object: 'checkout.session',
        mode: 'payment',
        status: 'complete',
        payment_status: 'paid',
        customer: null,
        client_reference_id: owner,
        metadata: { user_uuid: owner, top_up_quantity: String(pack.quantity) },
        subscription: null
      }
    }
  })
  const deliver = async (url: string) =>
    await client(url)('POST', '/webhooks/stripe', {
      raw: payload,
      headers: { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET }) }
    })
  const crashing = await startSvc(t, ['serve'], { ...env, FAULT_POINT: point })
  const answered = await deliver(crashing.url).catch(() => null)
  t.equal((await exited(crashing.child)).signal, 'SIGKILL', 'the process died at the fault point')
  t.equal(answered, null, 'Stripe got no answer')
  const grants = async (): Promise<RecordedEvent[]> =>
    (await store.readStream(`wallet-${owner}`)).filter(e => e.type === 'TokensGranted' && e.data.grant_uuid === `topup-${session}`)
  t.equal((await grants()).length, 1, 'the grant was made before the crash (positive control)')

  const restarted = await startSvc(t, ['serve'], env)
  const again = await deliver(restarted.url)
  t.equal(again.status, 200, "Stripe's next delivery is answered")
  const granted = await grants()
  t.equal(granted.length, 1, 'the top-up granted once')
  t.equal(granted[0]?.data.amount, pack.tokens, "of the pack's tokens")
  const receipt = await store.readStream(`stripe_event-${JSON.parse(payload).id}`)
  t.equal(receipt.length, 1, 'the event recorded once')
  await stop(restarted)
  const audit = spawnSync(process.execPath, [cli, 'audit', '--strict', '--ledger'], { env, encoding: 'utf8' })
  t.equal(audit.status, 0, `svc audit --strict --ledger: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`)
})
