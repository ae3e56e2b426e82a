import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import Stripe from 'stripe'
import { randomBytes } from 'node:crypto'
import { client, signUp, startTestService, testConfig, type Api } from '../support/service.ts'
import { startFakeStripe } from '../support/stripe-server.ts'
import { plansFile } from '../support/plans.ts'

// Billing end to end: the
// Stripe SDK pointed at a local server answering Stripe's documented shapes, and webhook
// events in Stripe's documented shapes signed with `stripe.webhooks.generateTestHeaderString`.
// checkout → plan active → invoice paid → tokens granted once even when Stripe repeats the
// event → plan change realigns the keys' limits → cancellation → Free at period end.
// The oracles: the plan file the test writes (tokens, prices, limits) and the calls the
// local Stripe server recorded.
const SECRET = 'whsec_test_secret_for_the_billing_suite'
const stripe = await startFakeStripe()
t.teardown(() => stripe.close())
const dataDir = t.testdir()
const TOKENS = { free: 1_000, starter: 20_000, pro: 100_000, business: 500_000 }
const LIMITS = { free: 60, starter: 300, pro: 1_200, business: 6_000 }
const PLANS_FILE = plansFile(dataDir, {})
const service = await startTestService(
  testConfig(dataDir, {
    PLANS_FILE,
    STRIPE_SECRET_KEY: 'sk_test_billing_suite',
    STRIPE_WEBHOOK_SECRET: SECRET,
    STRIPE_API_URL: stripe.url,
    PUBLIC_URL: 'https://app.example.com'
  })
)
t.teardown(() => service.close())
const api = client(service.url)
const token = await signUp(api, dataDir, 'payer@example.com')
const me = (await api('GET', '/api/users/me', { token })).body.uuid as string
const key = (await api('POST', '/api/keys', { token, body: { name: 'billing reader', environment: 'live', scopes: ['billing:read', 'api_keys:read'] } })).body
  .raw_key as string

let clock = Math.floor(Date.now() / 1000)
/** A Stripe event (https://docs.stripe.com/api/events/object) around `object`, made `at` (Unix s; later each time by default). */
function event(type: string, object: Record<string, unknown>, options: { id?: string; at?: number } = {}): Record<string, unknown> {
  return {
    id: options.id ?? `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: options.at ?? ++clock,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object }
  }
}

/** Posts `e` to the webhook as Stripe does: the exact bytes, signed with the endpoint's secret. */
async function deliver(e: Record<string, unknown>, secret = SECRET, to: Api = api): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(e)
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret })
  return await to('POST', '/webhooks/stripe', { raw: payload, headers: { 'stripe-signature': header } })
}

const subscriptionObject = (over: {
  id: string
  price: string
  status?: string
  cancel_at_period_end?: boolean
  period_end: number
}): Record<string, unknown> => ({
  id: over.id,
  object: 'subscription',
  customer: 'cus_test_payer',
  status: over.status ?? 'active',
  cancel_at_period_end: over.cancel_at_period_end ?? false,
  metadata: { user_uuid: me, plan: 'pro', cycle: 'yearly' },
  items: {
    object: 'list',
    data: [
      {
        id: 'si_test_1',
        object: 'subscription_item',
        price: { id: over.price, object: 'price' },
        quantity: 1,
        current_period_start: over.period_end - 365 * 86_400,
        current_period_end: over.period_end
      }
    ]
  }
})

const invoice = (id: string, price: string, subscription: string): Record<string, unknown> => ({
  id,
  object: 'invoice',
  customer: 'cus_test_payer',
  status: 'paid',
  billing_reason: 'subscription_cycle',
  amount_paid: 79_000,
  parent: {
    type: 'subscription_details',
    quote_details: null,
    subscription_details: { subscription, metadata: { user_uuid: me, plan: 'pro', cycle: 'yearly' } }
  },
  lines: {
    object: 'list',
    data: [
      {
        id: 'il_test_1',
        object: 'line_item',
        amount: 79_000,
        period: { start: clock, end: clock + 365 * 86_400 },
        pricing: { type: 'price_details', price_details: { price, product: 'prod_test' } }
      }
    ]
  }
})

const balance = async (): Promise<number> => (await api('GET', '/api/wallet', { token })).body.balance
const subscription = async (): Promise<any> => (await api('GET', '/api/subscription', { token: key })).body
const keyLimit = async (): Promise<number> => (await api('GET', '/api/keys/me', { token: key })).body.rate_limit_per_minute

t.test('GET /api/config: the plan grid, top-up packs and per-check costs from the plan file', async t => {
  const r = await api('GET', '/api/config')
  t.equal(r.status, 200)
  t.same(
    r.body.plans.map((p: any) => p.code),
    ['free', 'starter', 'pro', 'business']
  )
  const pro = r.body.plans.find((p: any) => p.code === 'pro')
  t.same(pro.prices, { monthly: { cents: 7_900, currency: 'usd' }, yearly: { cents: 79_000, currency: 'usd' } })
  t.equal(pro.tokens_per_month, TOKENS.pro)
  t.equal(pro.limits.rate_limit_per_minute, LIMITS.pro)
  t.same(r.body.top_up, {
    available: true,
    currency: 'usd',
    packs: [
      { quantity: 1, tokens: 10_000, price_cents: 1_000 },
      { quantity: 5, tokens: 50_000, price_cents: 4_500 },
      { quantity: 10, tokens: 100_000, price_cents: 8_000 }
    ]
  })
  t.ok(Object.keys(r.body.check_costs).length > 0, 'per-check costs')
})

t.test('an account that never subscribed is on Free; the portal has no billing account yet', async t => {
  t.match(await subscription(), {
    plan: { code: 'free' },
    status: 'active',
    billing_cycle: null,
    current_period_end: null,
    cancel_at_period_end: false,
    has_billing_account: false
  })
  t.equal(await keyLimit(), LIMITS.free)
  const portal = await api('POST', '/api/billing/portal', { token, body: {} })
  t.equal(portal.status, 404)
  t.equal(portal.body.code, 'billing_portal.no_billing_account')
  const noScope = (await api('POST', '/api/keys', { token, body: { name: 'no billing', environment: 'live', scopes: ['results:read'] } })).body.raw_key
  t.equal((await api('GET', '/api/subscription', { token: noScope })).status, 403, 'billing:read is needed')
  t.equal((await api('GET', '/api/subscription')).status, 401)
})

t.test('POST /api/billing/checkout: 400 for an unknown plan, cycle, quantity or locale; 401 without a session', async t => {
  const before = stripe.calls.length
  for (const [body, code] of [
    [{ plan: 'platinum', locale: 'en' }, 'billing_checkout.unknown_plan'],
    [{ plan: 'free', locale: 'en' }, 'billing_checkout.unknown_plan'],
    [{ plan: 'pro', cycle: 'weekly', locale: 'en' }, 'billing_checkout.invalid_request'],
    [{ top_up_quantity: 3, locale: 'en' }, 'billing_checkout.unknown_quantity'],
    [{ top_up_quantity: 0, locale: 'en' }, 'billing_checkout.invalid_request'],
    [{ plan: 'pro', locale: 'tlh' }, 'billing_checkout.invalid_locale'],
    [{ plan: 'pro', top_up_quantity: 1, locale: 'en' }, 'billing_checkout.invalid_request'],
    [{ locale: 'en' }, 'billing_checkout.invalid_request'],
    [{ plan: 'pro' }, 'billing_checkout.invalid_request']
  ] as const) {
    const r = await api('POST', '/api/billing/checkout', { token, body })
    t.equal(r.status, 400, JSON.stringify(body))
    t.equal(r.body.code, code, JSON.stringify(body))
  }
  t.equal(stripe.calls.length, before, 'nothing reached Stripe')
  t.equal((await api('POST', '/api/billing/checkout', { body: { plan: 'pro', locale: 'en' } })).status, 401)
  t.equal((await api('POST', '/api/billing/checkout', { token: key, body: { plan: 'pro', locale: 'en' } })).status, 401, 'a session only (Auth J)')
})

t.test('checkout → plan active → invoice paid → tokens once → plan change → cancellation → Free at period end', async t => {
  const start = await balance()
  const r = await api('POST', '/api/billing/checkout', { token, body: { plan: 'pro', cycle: 'yearly', locale: 'fr' } })
  t.equal(r.status, 200)
  t.match(r.body.url, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/)
  const call = stripe.calls.at(-1)!
  t.equal(call.path, '/v1/checkout/sessions')
  t.equal(call.authorization, 'Bearer sk_test_billing_suite')
  t.match(call.params, {
    mode: 'subscription',
    'line_items[0][price]': 'price_pro_yearly',
    'line_items[0][quantity]': '1',
    client_reference_id: me,
    'metadata[user_uuid]': me,
    'subscription_data[metadata][plan]': 'pro',
    locale: 'fr'
  })
  t.match(call.params.success_url, /^https:\/\/app\.example\.com\/billing\/success\?session_id=\{CHECKOUT_SESSION_ID\}$/)

  // Stripe: the customer paid; the session completed.
  const completed = event('checkout.session.completed', {
    id: r.body.session_id,
    object: 'checkout.session',
    mode: 'subscription',
    status: 'complete',
    payment_status: 'paid',
    customer: 'cus_test_payer',
    client_reference_id: me,
    metadata: { user_uuid: me, plan: 'pro', cycle: 'yearly' },
    subscription: 'sub_test_1'
  })
  const handled = await deliver(completed)
  t.same([handled.status, handled.body], [200, { received: true, duplicate: false }])
  t.match(await subscription(), { plan: { code: 'pro' }, status: 'active', billing_cycle: 'yearly', has_billing_account: true })
  t.equal(await keyLimit(), LIMITS.pro, "the key's limit is the new plan's")
  const again = await api('POST', '/api/billing/checkout', { token, body: { plan: 'business', locale: 'en' } })
  t.equal(again.status, 409, 'an active paid subscription: change it in the portal')
  t.equal(again.body.code, 'billing_checkout.already_subscribed')

  const periodEnd = clock + 365 * 86_400
  t.equal(
    (await deliver(event('customer.subscription.updated', subscriptionObject({ id: 'sub_test_1', price: 'price_pro_yearly', period_end: periodEnd })))).status,
    200
  )
  t.equal((await subscription()).current_period_end, new Date(periodEnd * 1000).toISOString())

  // The first invoice is paid: a year of Pro tokens, once, whatever Stripe repeats.
  const paid = event('invoice.paid', invoice('in_test_1', 'price_pro_yearly', 'sub_test_1'))
  t.same((await deliver(paid)).body, { received: true, duplicate: false })
  t.equal(await balance(), start + 12 * TOKENS.pro, 'a year of Pro tokens')
  t.same((await deliver(paid)).body, { received: true, duplicate: true }, 'the same event again is a duplicate')
  t.equal((await deliver(event('invoice.paid', invoice('in_test_1', 'price_pro_yearly', 'sub_test_1')))).status, 200, 'another event for the same invoice')
  t.equal(await balance(), start + 12 * TOKENS.pro, 'still granted once')
  const ledger = await api('GET', '/api/wallet/transactions?sort=occurred_at&order=desc&limit=5', { token })
  t.match(ledger.body.items[0], { transaction_type: 'grant', amount: 12 * TOKENS.pro })

  // The customer moves to Business monthly in the portal.
  t.equal(
    (await deliver(event('customer.subscription.updated', subscriptionObject({ id: 'sub_test_1', price: 'price_business_monthly', period_end: periodEnd }))))
      .status,
    200
  )
  t.match(await subscription(), { plan: { code: 'business' }, billing_cycle: 'monthly' })
  t.equal(await keyLimit(), LIMITS.business, 'realigned with the plan')
  const late = event('customer.subscription.updated', subscriptionObject({ id: 'sub_test_1', price: 'price_pro_yearly', period_end: periodEnd }), {
    at: clock - 100
  })
  t.equal((await deliver(late)).status, 200, 'an older event arriving late')
  t.equal((await subscription()).plan.code, 'business', 'changes nothing')

  // Cancellation: Business until the period ends, then Free.
  t.equal(
    (
      await deliver(
        event(
          'customer.subscription.updated',
          subscriptionObject({ id: 'sub_test_1', price: 'price_business_monthly', period_end: periodEnd, cancel_at_period_end: true })
        )
      )
    ).status,
    200
  )
  t.match(await subscription(), { plan: { code: 'business' }, cancel_at_period_end: true })
  t.equal(
    (
      await deliver(
        event(
          'customer.subscription.deleted',
          subscriptionObject({ id: 'sub_test_2_unrelated', price: 'price_business_monthly', period_end: periodEnd, status: 'canceled' })
        )
      )
    ).status,
    200,
    "another subscription's end"
  )
  t.equal((await subscription()).plan.code, 'business', 'does not end this one')
  t.equal(
    (
      await deliver(
        event(
          'customer.subscription.deleted',
          subscriptionObject({ id: 'sub_test_1', price: 'price_business_monthly', period_end: periodEnd, status: 'canceled', cancel_at_period_end: true })
        )
      )
    ).status,
    200
  )
  t.match(await subscription(), { plan: { code: 'free' }, billing_cycle: null, cancel_at_period_end: false, has_billing_account: true })
  t.equal(await keyLimit(), LIMITS.free, "back to Free's limit")
  t.equal(await balance(), start + 12 * TOKENS.pro, 'tokens already granted stay')
  const feed = (await api('GET', '/api/notifications?limit=96', { token })).body
  t.same(
    feed.items
      .map((n: any) => n.kind)
      .filter((k: string) => k.startsWith('plan_'))
      .reverse(),
    ['plan_started', 'plan_changed', 'plan_cancelling', 'plan_ended'],
    'the account heard of each step, once'
  )
})

t.test('a top-up pack: payment mode, tokens granted once per paid session', async t => {
  const start = await balance()
  const r = await api('POST', '/api/billing/checkout', { token, body: { top_up_quantity: 5, locale: 'en' } })
  t.equal(r.status, 200)
  t.match(stripe.calls.at(-1)!.params, {
    mode: 'payment',
    'line_items[0][price]': 'price_topup_50k',
    customer: 'cus_test_payer',
    'metadata[top_up_quantity]': '5'
  })
  const session = {
    id: r.body.session_id,
    object: 'checkout.session',
    mode: 'payment',
    status: 'complete',
    customer: 'cus_test_payer',
    client_reference_id: me,
    metadata: { user_uuid: me, top_up_quantity: '5' },
    subscription: null
  }
  t.equal((await deliver(event('checkout.session.completed', { ...session, payment_status: 'unpaid' }))).status, 200, 'not paid yet (a delayed method)')
  t.equal(await balance(), start, 'grants nothing')
  t.equal((await deliver(event('checkout.session.completed', { ...session, payment_status: 'paid' }))).status, 200)
  t.equal(await balance(), start + 50_000)
  t.equal((await deliver(event('checkout.session.completed', { ...session, payment_status: 'paid' }))).status, 200, "the session's completion told again")
  t.equal(await balance(), start + 50_000, 'granted once per session')
})

t.test('POST /api/billing/portal: the hosted portal of the billing account', async t => {
  const r = await api('POST', '/api/billing/portal', { token, body: { locale: 'fr' } })
  t.equal(r.status, 200)
  t.match(r.body.url, /^https:\/\/billing\.stripe\.com\/p\/session\//)
  t.match(stripe.calls.at(-1), {
    path: '/v1/billing_portal/sessions',
    params: { customer: 'cus_test_payer', return_url: 'https://app.example.com/billing', locale: 'fr' }
  })
  const bodiless = await api('POST', '/api/billing/portal', { token })
  t.equal(bodiless.status, 200, `no body: ${JSON.stringify(bodiless.body)}`)
  t.equal((await api('POST', '/api/billing/portal', { token, body: { locale: 'tlh' } })).status, 400)
  t.equal((await api('POST', '/api/billing/portal', { token: key, body: {} })).status, 401, 'a session only')
})

t.test('the webhook refuses what Stripe did not sign, and changes nothing', async t => {
  const start = await balance()
  const forged = event('invoice.paid', invoice('in_test_forged', 'price_business_monthly', 'sub_test_1'))
  const wrong = await deliver(forged, 'whsec_not_ours')
  t.equal(wrong.status, 400)
  t.equal(wrong.body.code, 'billing_webhook.invalid_signature')
  const unsigned = await api('POST', '/webhooks/stripe', { raw: JSON.stringify(forged) })
  t.equal(unsigned.status, 400, 'no signature')
  const payload = JSON.stringify(forged)
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET })
  const tampered = await api('POST', '/webhooks/stripe', { raw: payload.replace('in_test_forged', 'in_test_forgeD'), headers: { 'stripe-signature': header } })
  t.equal(tampered.status, 400, 'a body changed after signing')
  const old = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 3_600 })
  t.equal((await api('POST', '/webhooks/stripe', { raw: payload, headers: { 'stripe-signature': old } })).status, 400, 'a signature older than the tolerance')
  const garbage = await deliver({ id: 'evt_test_garbage', type: 'invoice.paid', created: clock, data: { object: { id: 42 } } })
  t.equal(garbage.status, 400, 'a signed event whose fields do not parse')
  t.equal(garbage.body.code, 'billing_webhook.invalid_event')
  t.same(
    (await deliver(event('customer.created', { id: 'cus_x', object: 'customer' }))).body,
    { received: true, duplicate: false },
    'an event type we do not use is acknowledged'
  )
  t.equal(await balance(), start, 'nothing was granted')
})

t.test('Stripe not answering: checkout and portal answer 503', async t => {
  stripe.failing = true
  t.teardown(() => {
    stripe.failing = false
  })
  const r = await api('POST', '/api/billing/checkout', { token, body: { top_up_quantity: 1, locale: 'en' } })
  t.equal(r.status, 503)
  t.equal(r.body.code, 'billing.unavailable')
  t.equal((await api('POST', '/api/billing/portal', { token, body: {} })).status, 503)
})

t.test('without STRIPE_SECRET_KEY: billing answers 503 for what it would take, everything else works', async t => {
  const dir = join(dataDir, 'bare')
  mkdirSync(dir)
  const bare = await startTestService(testConfig(dir, { PLANS_FILE }))
  t.teardown(() => bare.close())
  const a = client(bare.url)
  const tk = await signUp(a, dir, 'no-billing@example.com')
  const r = await a('POST', '/api/billing/checkout', { token: tk, body: { plan: 'pro', locale: 'en' } })
  t.equal(r.status, 503, 'a checkout it would take: 503')
  t.equal(r.body.code, 'billing.unavailable')
  const portal = await a('POST', '/api/billing/portal', { token: tk, body: {} })
  t.equal(portal.status, 404, 'the portal of an account without a billing account is judged first: 404, as with Stripe')
  t.equal(portal.body.code, 'billing_portal.no_billing_account')
  t.equal((await deliver(event('invoice.paid', invoice('in_x', 'price_pro_yearly', 'sub_x')), SECRET, a)).status, 503, 'the webhook too')
  t.equal((await a('GET', '/api/config')).body.top_up.available, false, 'top-ups are not offered')
  t.match((await a('GET', '/api/subscription', { token: tk })).body, { plan: { code: 'free' } })
  t.equal((await a('GET', '/api/wallet', { token: tk })).body.balance, TOKENS.free)
})
