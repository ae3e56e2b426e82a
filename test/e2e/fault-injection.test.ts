import t from 'tap'
import { readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import Stripe from 'stripe'
import { client } from '../support/service.ts'
import { exited, startSvc } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'

// Crash tests: `svc serve` is killed with SIGKILL at each
// step of a submission and of its settlement (FAULT_POINT), then started again. After
// the restart every token is accounted for — captured against a completed job or
// released — and the client's retry with the same Idempotency-Key gets one job. The
// oracle is the wallet and job streams as stored, summed here.

import { crashSeed, type Held } from '../support/crash-seed.ts'

// (The seed, the copies and the oracles' readers: test/support/crash-seed.ts.)

const { cli, rates, STRIPE_SECRET, stop, owner, key, copyFor, reservations } = await crashSeed(t)

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
