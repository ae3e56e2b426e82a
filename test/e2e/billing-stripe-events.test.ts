import t from 'tap'
import Stripe from 'stripe'
import { randomBytes } from 'node:crypto'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { startFakeStripe } from '../support/stripe-server.ts'
import { plansFile } from '../support/plans.ts'

// What Stripe's webhook events may grant, end to end through `POST /webhooks/stripe` (events in
// Stripe's documented shapes, signed with `Stripe.webhooks.generateTestHeaderString`):
// - `invoice.paid` grants a period's plan tokens only for an invoice that opens a period
//   (Invoice `billing_reason` `subscription_create` / `subscription_cycle`), for the plan of
//   its non-proration line covering the new period (line `parent.subscription_item_details.proration`,
//   or `proration` on lines of API versions before 2025-03-31); proration invoices grant nothing;
// - subscription events: a subscription Stripe ended never comes back (not even by an update
//   of the same `created` second), only the account's current subscription changes its plan,
//   and only the statuses that hold a paid plan (`active`, `trialing`, `past_due` for 7 days)
//   give its caps (`GET /api/keys/me` rate limit, `GET /api/subscription` limits);
// - a signed body that is not an event object is a 400 problem.
// The oracles: the plan file (tokens, limits) and the receipt each event leaves (`stripe_event-<id>`).
const SECRET = 'whsec_test_secret_for_the_stripe_events_suite'
const stripe = await startFakeStripe()
t.teardown(() => stripe.close())
const dataDir = t.testdir()
const TOKENS = { free: 1_000, starter: 20_000, pro: 100_000, business: 500_000 }
const LIMITS = { free: 60, starter: 300, pro: 1_200, business: 6_000 }
const PRICE = { starter: 1_900, pro: 7_900, business: 24_900 }
const service = await startTestService(
  testConfig(dataDir, {
    PLANS_FILE: plansFile(dataDir, {}),
    STRIPE_SECRET_KEY: 'sk_test_stripe_events_suite',
    STRIPE_WEBHOOK_SECRET: SECRET,
    STRIPE_API_URL: stripe.url
  })
)
t.teardown(() => service.close())
const api = client(service.url)

const DAY = 86_400
const MONTH = 30 * DAY
const nowS = (): number => Math.floor(Date.now() / 1000)

interface Account {
  me: string
  token: string
  key: string
}
let accounts = 0
/** A new confirmed account with a key that reads billing and itself. */
async function account(): Promise<Account> {
  const email = `payer-${++accounts}@example.com`
  const token = await signUp(api, dataDir, email)
  const me = (await api('GET', '/api/users/me', { token })).body.uuid as string
  const key = (await api('POST', '/api/keys', { token, body: { name: 'billing reader', environment: 'live', scopes: ['billing:read', 'api_keys:read'] } })).body
    .raw_key as string
  return { me, token, key }
}

/** A Stripe event (https://docs.stripe.com/api/events/object) around `object`, made `at` (Unix s). */
function event(type: string, object: Record<string, unknown>, at: number, apiVersion = '2025-09-30.clover'): Record<string, unknown> {
  return {
    id: `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: apiVersion,
    created: at,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object }
  }
}

/** Posts `payload` to the webhook as Stripe does: the exact bytes, signed with the endpoint's secret. */
async function deliverRaw(payload: string): Promise<{ status: number; body: any; headers: Headers }> {
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET })
  return await api('POST', '/webhooks/stripe', { raw: payload, headers: { 'stripe-signature': header } })
}
async function deliver(e: Record<string, unknown>): Promise<void> {
  const r = await deliverRaw(JSON.stringify(e))
  if (r.status !== 200) throw new Error(`webhook ${String(e.type)}: ${r.status} ${JSON.stringify(r.body)}`)
}

/** The effects the receipt of event `e` recorded. */
async function effects(e: Record<string, unknown>): Promise<string[]> {
  const [receipt] = await service.core.store.readStream(`stripe_event-${String(e.id)}`)
  return (receipt?.data as { effects: string[] } | undefined)?.effects ?? []
}

/** A Subscription object (https://docs.stripe.com/api/subscriptions/object), one item. */
function subscriptionObject(
  a: Account,
  o: { id: string; price: string; status?: string; cancel_at_period_end?: boolean; period_start: number }
): Record<string, unknown> {
  return {
    id: o.id,
    object: 'subscription',
    customer: `cus_${a.me.slice(0, 8)}`,
    status: o.status ?? 'active',
    cancel_at_period_end: o.cancel_at_period_end ?? false,
    metadata: { user_uuid: a.me },
    items: {
      object: 'list',
      data: [
        {
          id: `si_${o.id}`,
          object: 'subscription_item',
          price: { id: o.price, object: 'price' },
          quantity: 1,
          current_period_start: o.period_start,
          current_period_end: o.period_start + MONTH
        }
      ]
    }
  }
}

/** An invoice line (https://docs.stripe.com/api/invoices/line_item) as of API 2025-03-31: a subscription item's, or a pending invoice item's (a proration left for the next invoice). */
function line(o: {
  price: string
  amount: number
  start: number
  end: number
  proration: boolean
  sub: string
  from?: 'subscription_item' | 'invoice_item'
}): Record<string, unknown> {
  const details =
    o.from === 'invoice_item'
      ? {
          type: 'invoice_item_details',
          invoice_item_details: {
            invoice_item: `ii_${randomBytes(6).toString('hex')}`,
            proration: o.proration,
            proration_details: { credited_items: null },
            subscription: o.sub
          },
          subscription_item_details: null
        }
      : {
          type: 'subscription_item_details',
          invoice_item_details: null,
          subscription_item_details: {
            invoice_item: null,
            proration: o.proration,
            proration_details: { credited_items: null },
            subscription: o.sub,
            subscription_item: `si_${o.sub}`
          }
        }
  return {
    id: `il_${randomBytes(6).toString('hex')}`,
    object: 'line_item',
    amount: o.amount,
    currency: 'usd',
    description: null,
    parent: details,
    period: { start: o.start, end: o.end },
    pricing: { type: 'price_details', price_details: { price: o.price, product: 'prod_test' }, unit_amount_decimal: String(o.amount) },
    quantity: 1
  }
}

/**
 * An Invoice (https://docs.stripe.com/api/invoices/object) of subscription `sub`, as of API
 * 2025-03-31. `extra`: more fields as Stripe sets them (the customer's credit balance before
 * and after, `starting_balance` and `ending_balance`; `total`; `total_discount_amounts`).
 */
function invoice(
  a: Account,
  o: { id: string; sub: string; billing_reason: string; amount_paid: number; lines: Array<Record<string, unknown>>; period_end: number },
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    id: o.id,
    object: 'invoice',
    customer: `cus_${a.me.slice(0, 8)}`,
    status: 'paid',
    billing_reason: o.billing_reason,
    amount_due: o.amount_paid,
    amount_paid: o.amount_paid,
    amount_remaining: 0,
    period_start: o.period_end - MONTH,
    period_end: o.period_end,
    parent: { type: 'subscription_details', quote_details: null, subscription_details: { subscription: o.sub, metadata: { user_uuid: a.me } } },
    lines: { object: 'list', has_more: false, data: o.lines },
    ...extra
  }
}

const balance = async (a: Account): Promise<number> => (await api('GET', '/api/wallet', { token: a.token })).body.balance
const subscriptionView = async (a: Account): Promise<any> => (await api('GET', '/api/subscription', { token: a.key })).body
const keyLimit = async (a: Account): Promise<number> => (await api('GET', '/api/keys/me', { token: a.key })).body.rate_limit_per_minute

t.test('invoice.paid: proration invoices of a downgrade and an upgrade grant nothing; a renewal grants the plan of its new period', async t => {
  const a = await account()
  const start = await balance(a)
  const T = nowS() - 20 * DAY
  await deliver(event('customer.subscription.created', subscriptionObject(a, { id: 'sub_a', price: 'price_business_monthly', period_start: T }), T))
  const first = event(
    'invoice.paid',
    invoice(a, {
      id: 'in_a_create',
      sub: 'sub_a',
      billing_reason: 'subscription_create',
      amount_paid: PRICE.business,
      period_end: T,
      lines: [line({ price: 'price_business_monthly', amount: PRICE.business, start: T, end: T + MONTH, proration: false, sub: 'sub_a' })]
    }),
    T + 1
  )
  await deliver(first)
  t.equal(await balance(a), start + TOKENS.business, 'the first invoice opens a Business month')
  t.same(await effects(first), ['granted business (monthly) tokens for invoice in_a_create'])

  // Downgrade to Pro mid-period, prorated and invoiced at once: a credit for unused Business
  // time, a charge for the rest of the month on Pro; $0 to pay (the credit covers it).
  const D = T + 10 * DAY
  await deliver(event('customer.subscription.updated', subscriptionObject(a, { id: 'sub_a', price: 'price_pro_monthly', period_start: T }), D))
  t.equal(await keyLimit(a), LIMITS.pro, 'the caps follow the plan at once')
  const downgrade = event(
    'invoice.paid',
    invoice(a, {
      id: 'in_a_downgrade',
      sub: 'sub_a',
      billing_reason: 'subscription_update',
      amount_paid: 0,
      period_end: D,
      lines: [
        line({ price: 'price_business_monthly', amount: -16_600, start: D, end: T + MONTH, proration: true, sub: 'sub_a' }),
        line({ price: 'price_pro_monthly', amount: 5_266, start: D, end: T + MONTH, proration: true, sub: 'sub_a' })
      ]
    }),
    D + 1
  )
  await deliver(downgrade)
  t.equal(await balance(a), start + TOKENS.business, 'a $0 downgrade invoice grants nothing')
  t.match((await effects(downgrade))[0], /^ignored: invoice in_a_downgrade \(billing_reason subscription_update\) opens no period/, 'the receipt says why')

  // Upgrade back to Business: a credit for unused Pro time and a charge for Business, paid.
  const U = D + 2 * DAY
  await deliver(event('customer.subscription.updated', subscriptionObject(a, { id: 'sub_a', price: 'price_business_monthly', period_start: T }), U))
  const upgrade = event(
    'invoice.paid',
    invoice(a, {
      id: 'in_a_upgrade',
      sub: 'sub_a',
      billing_reason: 'subscription_update',
      amount_paid: 11_620,
      period_end: U,
      lines: [
        line({ price: 'price_pro_monthly', amount: -4_740, start: U, end: T + MONTH, proration: true, sub: 'sub_a' }),
        line({ price: 'price_business_monthly', amount: 14_940, start: U, end: T + MONTH, proration: true, sub: 'sub_a' })
      ]
    }),
    U + 1
  )
  await deliver(upgrade)
  t.equal(await balance(a), start + TOKENS.business, 'a paid upgrade proration grants nothing either (tokens come with the next period)')
  t.equal(await keyLimit(a), LIMITS.business)

  // Downgrade to Starter with prorations left pending, then the renewal: the invoice carries
  // the pending prorations (invoice items) before the new Starter month.
  const S = U + 3 * DAY
  await deliver(event('customer.subscription.updated', subscriptionObject(a, { id: 'sub_a', price: 'price_starter_monthly', period_start: T }), S))
  const R = T + MONTH
  await deliver(event('customer.subscription.updated', subscriptionObject(a, { id: 'sub_a', price: 'price_starter_monthly', period_start: R }), R))
  const renewal = event(
    'invoice.paid',
    invoice(a, {
      id: 'in_a_cycle',
      sub: 'sub_a',
      billing_reason: 'subscription_cycle',
      amount_paid: 0,
      period_end: R,
      lines: [
        line({ price: 'price_business_monthly', amount: -12_450, start: S, end: R, proration: true, sub: 'sub_a', from: 'invoice_item' }),
        line({ price: 'price_starter_monthly', amount: 950, start: S, end: R, proration: true, sub: 'sub_a', from: 'invoice_item' }),
        line({ price: 'price_starter_monthly', amount: PRICE.starter, start: R, end: R + MONTH, proration: false, sub: 'sub_a' })
      ]
    }),
    R + 1
  )
  await deliver(renewal)
  t.equal(await balance(a), start + TOKENS.business + TOKENS.starter, 'the renewal grants a Starter month, not the Business of its proration lines')
  t.same(await effects(renewal), ['granted starter (monthly) tokens for invoice in_a_cycle'])
  await deliver(
    event(
      'invoice.paid',
      invoice(a, {
        id: 'in_a_cycle',
        sub: 'sub_a',
        billing_reason: 'subscription_cycle',
        amount_paid: 0,
        period_end: R,
        lines: [line({ price: 'price_starter_monthly', amount: PRICE.starter, start: R, end: R + MONTH, proration: false, sub: 'sub_a' })]
      }),
      R + 2
    )
  )
  t.equal(await balance(a), start + TOKENS.business + TOKENS.starter, 'once per invoice')
})

t.test("invoice.paid: a renewal paid from the customer's credit balance, wholly or partly, grants its period's plan (the line, not the cash)", async t => {
  // Stripe applies the customer's credit balance (a negative `balance`: unused time credited
  // by a downgrade, a credit the operator gave) to the next invoice: `starting_balance` is
  // the balance before, `amount_due` (and so `amount_paid`) what is left to collect, 0 when
  // the credit covers it all; the period's line keeps the plan's price
  // (https://docs.stripe.com/billing/customer/balance). The grant follows the line.
  const a = await account()
  const start = await balance(a)
  const T = nowS() - 4 * MONTH
  const periodOf = (id: string, price: string, amount: number, at: number): Record<string, unknown> =>
    line({ price, amount, start: at, end: at + MONTH, proration: false, sub: `sub_${id}` })
  const wholly = event(
    'invoice.paid',
    invoice(
      a,
      {
        id: 'in_c_wholly',
        sub: 'sub_c',
        billing_reason: 'subscription_cycle',
        amount_paid: 0,
        period_end: T,
        lines: [periodOf('c', 'price_pro_monthly', PRICE.pro, T)]
      },
      { total: PRICE.pro, starting_balance: -30_000, ending_balance: -30_000 + PRICE.pro }
    ),
    T + 1
  )
  await deliver(wholly)
  t.equal(await balance(a), start + TOKENS.pro, 'paid wholly from the credit balance (amount_paid 0): a Pro month')
  t.same(await effects(wholly), ['granted pro (monthly) tokens for invoice in_c_wholly'])

  const partly = event(
    'invoice.paid',
    invoice(
      a,
      {
        id: 'in_c_partly',
        sub: 'sub_c',
        billing_reason: 'subscription_cycle',
        amount_paid: PRICE.pro - 2_100,
        period_end: T + MONTH,
        lines: [periodOf('c', 'price_pro_monthly', PRICE.pro, T + MONTH)]
      },
      { total: PRICE.pro, starting_balance: -2_100, ending_balance: 0 }
    ),
    T + MONTH + 1
  )
  await deliver(partly)
  t.equal(await balance(a), start + 2 * TOKENS.pro, `partly (${PRICE.pro - 2_100} of ${PRICE.pro} collected): a whole Pro month, not a share`)

  // Pending proration credits (unused Business time after a downgrade) larger than the new period: the invoice's total is negative,
  // nothing is collected and the rest goes back to the balance; the new period is still the plan's.
  const negative = event(
    'invoice.paid',
    invoice(
      a,
      {
        id: 'in_c_negative',
        sub: 'sub_c',
        billing_reason: 'subscription_cycle',
        amount_paid: 0,
        period_end: T + 2 * MONTH,
        lines: [
          line({
            price: 'price_business_monthly',
            amount: -16_600,
            start: T + 40 * DAY,
            end: T + 2 * MONTH,
            proration: true,
            sub: 'sub_c',
            from: 'invoice_item'
          }),
          periodOf('c', 'price_starter_monthly', PRICE.starter, T + 2 * MONTH)
        ]
      },
      { total: PRICE.starter - 16_600, starting_balance: 0, ending_balance: PRICE.starter - 16_600 }
    ),
    T + 2 * MONTH + 1
  )
  await deliver(negative)
  t.equal(await balance(a), start + 2 * TOKENS.pro + TOKENS.starter, 'a renewal whose credits exceed its charge: a Starter month')

  // A coupon that takes the whole price (the operator's choice): the period is still the plan's.
  const discounted = event(
    'invoice.paid',
    invoice(
      a,
      {
        id: 'in_c_coupon',
        sub: 'sub_c',
        billing_reason: 'subscription_cycle',
        amount_paid: 0,
        period_end: T + 3 * MONTH,
        lines: [periodOf('c', 'price_starter_monthly', PRICE.starter, T + 3 * MONTH)]
      },
      { total: 0, total_discount_amounts: [{ amount: PRICE.starter, discount: 'di_full' }], starting_balance: 0, ending_balance: 0 }
    ),
    T + 3 * MONTH + 1
  )
  await deliver(discounted)
  t.equal(await balance(a), start + 2 * TOKENS.pro + 2 * TOKENS.starter, 'a renewal discounted to $0 by a coupon: a Starter month')
  await deliver({ ...wholly, id: `evt_${randomBytes(12).toString('hex')}` })
  t.equal(await balance(a), start + 2 * TOKENS.pro + 2 * TOKENS.starter, 'still once per invoice')
})

t.test('invoice.paid: invoices that open no period, a $0 trial line, and lines of API versions before 2025-03-31', async t => {
  const a = await account()
  const start = await balance(a)
  const T = nowS() - 10 * DAY
  const business = line({ price: 'price_business_monthly', amount: PRICE.business, start: T, end: T + MONTH, proration: false, sub: 'sub_b' })
  for (const reason of ['manual', 'subscription_threshold', 'subscription_update']) {
    const e = event(
      'invoice.paid',
      invoice(a, { id: `in_b_${reason}`, sub: 'sub_b', billing_reason: reason, amount_paid: PRICE.business, period_end: T, lines: [business] }),
      T
    )
    await deliver(e)
    t.match((await effects(e))[0], new RegExp(`^ignored: invoice in_b_${reason} \\(billing_reason ${reason}\\) opens no period`), `${reason}: ignored`)
  }
  t.equal(await balance(a), start, 'none of them granted tokens')

  const trial = event(
    'invoice.paid',
    invoice(a, {
      id: 'in_b_trial',
      sub: 'sub_b',
      billing_reason: 'subscription_create',
      amount_paid: 0,
      period_end: T,
      lines: [line({ price: 'price_business_monthly', amount: 0, start: T, end: T + 14 * DAY, proration: false, sub: 'sub_b' })]
    }),
    T + 1
  )
  await deliver(trial)
  t.equal(await balance(a), start, 'a trial period billed at $0 grants nothing')
  t.match((await effects(trial))[0], /^ignored: invoice in_b_trial bills its business period at 0/)

  const onlyProrations = event(
    'invoice.paid',
    invoice(a, {
      id: 'in_b_prorations',
      sub: 'sub_b',
      billing_reason: 'subscription_cycle',
      amount_paid: 1_000,
      period_end: T,
      lines: [line({ price: 'price_business_monthly', amount: 1_000, start: T - DAY, end: T, proration: true, sub: 'sub_b', from: 'invoice_item' })]
    }),
    T + 2
  )
  await deliver(onlyProrations)
  t.equal(await balance(a), start, 'a renewal with nothing but prorations grants nothing')

  // Before API 2025-03-31 (e.g. 2024-06-20): `subscription_details` on the invoice, `price`,
  // `proration` and `type` on each line.
  const old = (id: string, reason: string, lines: Array<Record<string, unknown>>): Record<string, unknown> => ({
    id,
    object: 'invoice',
    customer: 'cus_old',
    status: 'paid',
    billing_reason: reason,
    amount_paid: 0,
    subscription: 'sub_b',
    subscription_details: { metadata: { user_uuid: a.me } },
    lines: { object: 'list', data: lines }
  })
  const oldLine = (price: string, amount: number, start: number, proration: boolean, type = 'subscription'): Record<string, unknown> => ({
    id: `il_${randomBytes(6).toString('hex')}`,
    object: 'line_item',
    type,
    amount,
    price: { id: price, object: 'price' },
    proration,
    period: { start, end: start + MONTH }
  })
  const R = T + MONTH
  const oldDowngrade = event(
    'invoice.paid',
    old('in_b_old_update', 'subscription_update', [
      oldLine('price_business_monthly', -10_000, T + DAY, true),
      oldLine('price_pro_monthly', 3_000, T + DAY, true)
    ]),
    R - 1,
    '2024-06-20'
  )
  await deliver(oldDowngrade)
  t.equal(await balance(a), start, 'an older-shape proration invoice grants nothing')
  const oldRenewal = event(
    'invoice.paid',
    old('in_b_old_cycle', 'subscription_cycle', [
      oldLine('price_business_monthly', -10_000, T + DAY, true, 'invoiceitem'),
      oldLine('price_pro_monthly', PRICE.pro, R, false)
    ]),
    R,
    '2024-06-20'
  )
  await deliver(oldRenewal)
  t.equal(await balance(a), start + TOKENS.pro, 'an older-shape renewal grants the plan of its non-proration line')
})

t.test('subscription events: deleted then updated in the same second, out of order, and same-second updates', async t => {
  const a = await account()
  const T = nowS() - 5 * DAY
  await deliver(event('customer.subscription.created', subscriptionObject(a, { id: 'sub_c', price: 'price_pro_monthly', period_start: T }), T))
  t.equal(await keyLimit(a), LIMITS.pro)
  const S = T + DAY
  await deliver(
    event('customer.subscription.deleted', subscriptionObject(a, { id: 'sub_c', price: 'price_pro_monthly', status: 'canceled', period_start: T }), S)
  )
  t.equal(await keyLimit(a), LIMITS.free, 'ended: Free')
  const sameSecond = event('customer.subscription.updated', subscriptionObject(a, { id: 'sub_c', price: 'price_pro_monthly', period_start: T }), S)
  await deliver(sameSecond)
  t.equal(await keyLimit(a), LIMITS.free, 'an update of the same second as the deletion does not bring the plan back')
  t.match(await subscriptionView(a), { plan: { code: 'free' }, billing_cycle: null })
  t.same(await effects(sameSecond), ['ignored: subscription sub_c has ended'], 'the receipt says why')
  await deliver(event('customer.subscription.updated', subscriptionObject(a, { id: 'sub_c', price: 'price_business_monthly', period_start: T }), S - 60))
  t.equal(await keyLimit(a), LIMITS.free, 'nor an older update arriving late')
  await deliver(
    event(
      'checkout.session.completed',
      {
        id: 'cs_c',
        object: 'checkout.session',
        mode: 'subscription',
        status: 'complete',
        payment_status: 'paid',
        customer: 'cus_c',
        client_reference_id: a.me,
        metadata: { user_uuid: a.me, plan: 'pro', cycle: 'monthly' },
        subscription: 'sub_c'
      },
      S
    )
  )
  t.equal(await keyLimit(a), LIMITS.free, 'nor its checkout told late, of the same second')

  // A new subscription, and two updates of it in one second: both apply, in arrival order.
  const N = S + 60
  await deliver(event('customer.subscription.created', subscriptionObject(a, { id: 'sub_c2', price: 'price_starter_monthly', period_start: N }), N))
  await deliver(
    event(
      'customer.subscription.updated',
      subscriptionObject(a, { id: 'sub_c2', price: 'price_starter_monthly', cancel_at_period_end: true, period_start: N }),
      N
    )
  )
  t.match(
    await subscriptionView(a),
    { plan: { code: 'starter' }, status: 'active', cancel_at_period_end: true },
    'a new subscription after the end starts the plan; its same-second update applies'
  )
  t.equal(await keyLimit(a), LIMITS.starter)
  // Stripe's created (incomplete) delivered after the updated (active) of the same second.
  const M = N + 60
  const b = await account()
  await deliver(event('customer.subscription.updated', subscriptionObject(b, { id: 'sub_c3', price: 'price_pro_monthly', period_start: M }), M))
  await deliver(
    event('customer.subscription.created', subscriptionObject(b, { id: 'sub_c3', price: 'price_pro_monthly', status: 'incomplete', period_start: M }), M)
  )
  t.match(await subscriptionView(b), { plan: { code: 'pro' }, status: 'active' }, 'a subscription does not go back to incomplete')
})

t.test("subscription events: only the account's current subscription changes its plan", async t => {
  const a = await account()
  const T = nowS() - 5 * DAY
  await deliver(event('customer.subscription.created', subscriptionObject(a, { id: 'sub_d1', price: 'price_starter_monthly', period_start: T }), T))
  t.equal(await keyLimit(a), LIMITS.starter)
  const other = event('customer.subscription.updated', subscriptionObject(a, { id: 'sub_d2', price: 'price_business_monthly', period_start: T }), T + 10)
  await deliver(other)
  t.match(
    await subscriptionView(a),
    { plan: { code: 'starter' }, limits: { rate_limit_per_minute: LIMITS.starter } },
    "another subscription's update does not replace the plan"
  )
  t.equal(await keyLimit(a), LIMITS.starter)
  t.same(await effects(other), ['ignored: subscription sub_d2 is not the current one (sub_d1)'])
  await deliver(event('customer.subscription.created', subscriptionObject(a, { id: 'sub_d2', price: 'price_business_monthly', period_start: T }), T + 11))
  await deliver(
    event(
      'checkout.session.completed',
      {
        id: 'cs_d2',
        object: 'checkout.session',
        mode: 'subscription',
        status: 'complete',
        payment_status: 'paid',
        customer: 'cus_d',
        client_reference_id: a.me,
        metadata: { user_uuid: a.me, plan: 'business', cycle: 'monthly' },
        subscription: 'sub_d2'
      },
      T + 12
    )
  )
  t.equal(await keyLimit(a), LIMITS.starter, 'nor its creation, nor its checkout')
  await deliver(
    event('customer.subscription.deleted', subscriptionObject(a, { id: 'sub_d1', price: 'price_starter_monthly', status: 'canceled', period_start: T }), T + 20)
  )
  t.equal(await keyLimit(a), LIMITS.free, 'the current one ends')
  await deliver(event('customer.subscription.updated', subscriptionObject(a, { id: 'sub_d2', price: 'price_business_monthly', period_start: T }), T + 30))
  t.equal(await keyLimit(a), LIMITS.business, 'then another subscription may start the plan')
})

t.test("statuses that hold no paid plan, and an unpaid checkout, give Free's caps; GET /api/subscription shows the real status", async t => {
  const a = await account()
  const T = nowS() - 3 * DAY
  const free = (await api('GET', '/api/config')).body.plans.find((p: any) => p.code === 'free').limits
  t.equal(free.rate_limit_per_minute, LIMITS.free)
  const update = async (status: string, at: number, id = 'sub_e'): Promise<void> => {
    await deliver(event('customer.subscription.updated', subscriptionObject(a, { id, price: 'price_business_monthly', status, period_start: T }), at))
  }
  await update('incomplete', T)
  const view = await subscriptionView(a)
  t.match(
    view,
    { plan: { code: 'business' }, status: 'incomplete', billing_cycle: 'monthly', limits_plan: 'free' },
    'incomplete: the plan subscribed to and its status are shown, with the plan whose limits apply'
  )
  t.same(view.limits, free, "the limits are Free's")
  t.equal(await keyLimit(a), LIMITS.free, "and the key's rate limit")
  await update('active', T + 10)
  t.match(await subscriptionView(a), { plan: { code: 'business' }, status: 'active', limits: { rate_limit_per_minute: LIMITS.business } }, 'paid: Business')
  await update('past_due', T + 20)
  t.match(
    await subscriptionView(a),
    { plan: { code: 'business' }, status: 'past_due', limits: { rate_limit_per_minute: LIMITS.business } },
    'past_due within its 7 days of grace keeps the plan while Stripe retries'
  )
  await update('unpaid', T + 30)
  t.match(await subscriptionView(a), { status: 'unpaid', limits: { ...free } }, "unpaid: Free's caps")
  t.equal(await keyLimit(a), LIMITS.free)
  await update('paused', T + 40)
  t.match(await subscriptionView(a), { status: 'unpaid', limits: { ...free } }, "paused: Free's caps (kept as unpaid)")
  await update('trialing', T + 50)
  t.equal(await keyLimit(a), LIMITS.business, 'trialing: the plan')
  await update('incomplete_expired', T + 60)
  t.match(await subscriptionView(a), { plan: { code: 'free' }, status: 'active', billing_cycle: null }, 'incomplete_expired ends the plan')

  // past_due for longer than the grace: Free's caps until Stripe says it is paid again.
  const b = await account()
  const P = nowS() - 9 * DAY
  await deliver(event('customer.subscription.updated', subscriptionObject(b, { id: 'sub_f', price: 'price_pro_monthly', period_start: P }), P))
  await deliver(
    event(
      'customer.subscription.updated',
      subscriptionObject(b, { id: 'sub_f', price: 'price_pro_monthly', status: 'past_due', period_start: P + DAY }),
      P + DAY
    )
  )
  await deliver(
    event(
      'customer.subscription.updated',
      subscriptionObject(b, { id: 'sub_f', price: 'price_pro_monthly', status: 'past_due', cancel_at_period_end: true, period_start: P + DAY }),
      P + 2 * DAY
    )
  )
  t.match(
    await subscriptionView(b),
    { status: 'past_due', cancel_at_period_end: true, limits: { rate_limit_per_minute: LIMITS.free } },
    "past due for 8 days (the grace counts from the first past_due event): Free's caps"
  )
  t.equal(await keyLimit(b), LIMITS.free)
  await deliver(event('customer.subscription.updated', subscriptionObject(b, { id: 'sub_f', price: 'price_pro_monthly', period_start: P + DAY }), nowS()))
  t.equal(await keyLimit(b), LIMITS.pro, 'paid again: the plan is back')

  // A checkout completed before the payment cleared (payment_status unpaid): no caps yet.
  const c = await account()
  const session = {
    id: 'cs_g',
    object: 'checkout.session',
    mode: 'subscription',
    status: 'complete',
    customer: 'cus_g',
    client_reference_id: c.me,
    metadata: { user_uuid: c.me, plan: 'pro', cycle: 'monthly' },
    subscription: 'sub_g'
  }
  const unpaid = event('checkout.session.completed', { ...session, payment_status: 'unpaid' }, T)
  await deliver(unpaid)
  t.match(await subscriptionView(c), { status: 'incomplete', limits: { rate_limit_per_minute: LIMITS.free } }, "an unpaid checkout session gives Free's caps")
  t.equal(await keyLimit(c), LIMITS.free)
  t.match(await effects(unpaid), ['customer linked', 'plan pro (monthly) incomplete (payment unpaid)'])
  const conflict = await api('POST', '/api/billing/checkout', { token: c.token, body: { plan: 'business', locale: 'en' } })
  t.equal(conflict.status, 409, 'a second checkout while this subscription is incomplete: pay or cancel it in the portal')
  await deliver(event('customer.subscription.updated', subscriptionObject(c, { id: 'sub_g', price: 'price_pro_monthly', period_start: T }), T + 5))
  t.equal(await keyLimit(c), LIMITS.pro, "Stripe says it is active: the plan's caps")
})

t.test('a signed webhook whose body is not a Stripe event object is a 400 problem and changes nothing', async t => {
  const a = await account()
  const start = await balance(a)
  for (const body of [
    'null',
    '42',
    '[]',
    '"evt_1"',
    'true',
    '{}',
    '{"id":"evt_x","type":"invoice.paid","created":1,"data":null}',
    '{"id":"evt_y","type":"invoice.paid","created":1,"data":{"object":[]}}'
  ]) {
    const r = await deliverRaw(body)
    t.equal(r.status, 400, `${body}: 400`)
    t.match(r.headers.get('content-type'), /^application\/problem\+json/, `${body}: a problem`)
    t.equal(r.body.code, 'billing_webhook.invalid_event', `${body}: billing_webhook.invalid_event`)
  }
  t.equal(await balance(a), start, 'nothing changed')
})
