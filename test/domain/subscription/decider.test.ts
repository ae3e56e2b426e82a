import t from 'tap'
import * as subscription from '../../../src/domain/subscription/decider.ts'
import type { SubscriptionCommand } from '../../../src/domain/subscription/decider.ts'
import type { BillingCustomerLinked, PlanChanged, PlanEnded, PlanStarted, Subscription } from '../../../src/domain/subscription/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// An account's subscription (stream `subscription-<user>`; every event carries it whole).
// Interface section 2: "active subscription of the caller; a Free plan if the caller never
// subscribed"; section 8: plan-driven limits. Stripe may deliver events late and out of order
// (Stripe docs, "Event ordering"): one older than the latest applied changes nothing. Stripe's
// `created` is whole seconds: an event of the same second is applied, except that a subscription
// Stripe ended (`canceled`, `incomplete_expired`: terminal statuses) never comes back. Only the
// account's current subscription changes its plan. Which statuses hold the plan's caps:
// `planInEffect` (Subscription object `status`).

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'

// What the events carry: a paid subscription, and Free as the interface describes it.
const sub = (over: Partial<Subscription> = {}): Subscription => ({
  user_uuid: U,
  plan: 'pro',
  cycle: 'yearly',
  status: 'active',
  current_period_end: '2027-11-22T10:00:00.000Z',
  cancel_at_period_end: false,
  stripe_customer: 'cus_1',
  stripe_subscription: 'sub_1',
  stripe_as_of: 100,
  ...over
})
const free = (over: Partial<Subscription> = {}): Subscription => ({
  user_uuid: U,
  plan: 'free',
  cycle: null,
  status: 'active',
  current_period_end: null,
  cancel_at_period_end: false,
  stripe_customer: null,
  stripe_subscription: null,
  stripe_as_of: null,
  ...over
})

// Event builders.
const started = build<PlanStarted>('PlanStarted', { user_uuid: U, subscription: sub(), source: 'billing', at: now })
const changed = build<PlanChanged>('PlanChanged', { user_uuid: U, subscription: sub(), previous_plan: 'pro', source: 'billing', at: now })
const ended = build<PlanEnded>('PlanEnded', {
  user_uuid: U,
  subscription: free({ stripe_customer: 'cus_1', stripe_as_of: 103, ended_stripe_subscription: 'sub_1' }),
  previous_plan: 'pro',
  source: 'billing',
  at: now
})
const linked = build<BillingCustomerLinked>('BillingCustomerLinked', {
  user_uuid: U,
  subscription: free({ stripe_customer: 'cus_9' }),
  source: 'billing',
  at: now
})

// Command builders.
const set = (over: Partial<Extract<SubscriptionCommand, { type: 'SetPlan' }>['data']> = {}): SubscriptionCommand => ({
  type: 'SetPlan',
  data: {
    user_uuid: U,
    plan: 'pro',
    cycle: 'yearly',
    status: 'active',
    current_period_end: '2027-11-22T10:00:00.000Z',
    cancel_at_period_end: false,
    stripe_subscription: 'sub_1',
    stripe_customer: 'cus_1',
    source: 'billing',
    as_of: 100,
    now,
    ...over
  }
})
const end = (stripeSubscription: string | null, asOf: number | null, source: 'billing' | 'operator' = 'billing'): SubscriptionCommand => ({
  type: 'EndPlan',
  data: { user_uuid: U, stripe_subscription: stripeSubscription, source, as_of: asOf, now }
})
const link = (customer: string): SubscriptionCommand => ({ type: 'LinkCustomer', data: { user_uuid: U, stripe_customer: customer, now } })

t.test('SetPlan', async t => {
  const s = spec(t, subscription)
  s([]).when(set()).then([started()], 'from Free, a paid plan starts')
  s([started()])
    .when(set({ as_of: 101 }))
    .thenNothing('Stripe repeating the same state changes nothing')
  s([started()])
    .when(set({ plan: 'business', cycle: 'monthly', as_of: 102 }))
    .then(
      [changed({ subscription: sub({ plan: 'business', cycle: 'monthly', stripe_as_of: 102 }) })],
      'another plan and cycle: changed, naming the previous plan'
    )
  s([started()])
    .when(set({ plan: 'business', as_of: 99 }))
    .thenNothing('an event older than the latest applied changes nothing')
  s([])
    .when(set({ current_period_end: 'next tuesday' }))
    .thenRejects('subscription.invalid_period', 400, 'a period end that is not a date-time is refused')
  s([started()])
    .when(set({ status: 'past_due', source: 'operator', as_of: null }))
    .then(
      [changed({ subscription: sub({ status: 'past_due', past_due_since: now }), source: 'operator' })],
      "an operator's change carries no Stripe time and keeps the latest one (past due since its now)"
    )
  s([started()])
    .when(set({ cancel_at_period_end: true, as_of: 102 }))
    .then([changed({ subscription: sub({ cancel_at_period_end: true, stripe_as_of: 102 }) })], 'a cancellation at period end is a change')
  s([started()])
    .when(set({ plan: 'free', as_of: 103 }))
    .then([ended()], 'setting Free ends the paid plan')
  s([])
    .when(set({ plan: 'free' }))
    .thenNothing('setting Free on Free: nothing')
  s([linked()])
    .when(set({ stripe_customer: null }))
    .then([started({ subscription: sub({ stripe_customer: 'cus_9' }) })], 'a plan set without a customer keeps the linked one')
  s([started(), ended()])
    .when(set({ stripe_subscription: 'sub_2', as_of: 104 }))
    .then(
      [started({ subscription: sub({ stripe_subscription: 'sub_2', stripe_as_of: 104 }) })],
      'after the plan ended, a new subscription starts a paid plan again from Free'
    )
})

t.test('SetPlan: the same second, an ended subscription, another subscription', async t => {
  const s = spec(t, subscription)
  // Stripe's `created` is whole seconds: two events of one second apply in arrival order.
  s([started()])
    .when(set({ cancel_at_period_end: true, as_of: 100 }))
    .then([changed({ subscription: sub({ cancel_at_period_end: true }) })], 'an update of the same second as the latest applied is applied')
  s([started(), changed({ subscription: sub({ cancel_at_period_end: true }) })])
    .when(set({ plan: 'business', cancel_at_period_end: true, as_of: 100 }))
    .then([changed({ subscription: sub({ plan: 'business', cancel_at_period_end: true }) })], 'and a third of that second too')
  // Deleted, then an update of the same second (or later) for that subscription: terminal.
  s([started(), ended()])
    .when(set({ as_of: 103 }))
    .thenNothing('an update of the second the subscription ended does not bring the plan back')
  s([started(), ended()])
    .when(set({ as_of: 104 }))
    .thenNothing('nor a later one: canceled is terminal')
  s([started(), ended()])
    .when(set({ as_of: 102 }))
    .thenNothing('nor an older one')
  s([started(), ended(), linked({ subscription: free({ stripe_customer: 'cus_9', stripe_as_of: 103, ended_stripe_subscription: 'sub_1' }) })])
    .when(set({ as_of: 103 }))
    .thenNothing('a customer linked since keeps the ended subscription on record')
  s([started(), ended()])
    .when(set({ stripe_subscription: 'sub_2', as_of: 103 }))
    .then(
      [started({ subscription: sub({ stripe_subscription: 'sub_2', stripe_as_of: 103 }) })],
      'a new subscription of the same second as the end may start the plan'
    )
  s([started(), ended({ source: 'operator', subscription: free({ stripe_customer: 'cus_1', stripe_as_of: 100 }) })])
    .when(set({ as_of: 101 }))
    .then([started({ subscription: sub({ stripe_as_of: 101 }) })], "an operator's end does not make the Stripe subscription terminal (it may still be billing)")
  // Only the current subscription changes the plan while a paid plan is held.
  s([started()])
    .when(set({ stripe_subscription: 'sub_2', plan: 'business', as_of: 101 }))
    .thenNothing('another subscription does not replace the current one')
  s([started({ subscription: sub({ status: 'incomplete' }) })])
    .when(set({ stripe_subscription: 'sub_2', as_of: 101 }))
    .thenNothing('not even while the current one is incomplete (it has not ended)')
  s([started({ subscription: sub({ stripe_subscription: null }) })])
    .when(set({ stripe_subscription: 'sub_2', as_of: 101 }))
    .then(
      [changed({ subscription: sub({ stripe_subscription: 'sub_2', stripe_as_of: 101 }) })],
      'a plan an operator set without a Stripe subscription is taken over by one'
    )
  // `incomplete` is a subscription's first status only.
  s([started()])
    .when(set({ status: 'incomplete', as_of: 100 }))
    .thenNothing('a created (incomplete) delivered after an update (active) of the same second changes nothing')
  s([started({ subscription: sub({ status: 'incomplete' }) })])
    .when(set({ as_of: 100 }))
    .then([changed({ subscription: sub() })], 'incomplete → active of the same second applies')
  t.equal(
    subscription.ignoredBecause(set({ stripe_subscription: 'sub_2' }) as Extract<SubscriptionCommand, { type: 'SetPlan' }>, { subscription: sub() }),
    'subscription sub_2 is not the current one (sub_1)',
    'the reason is named for the receipt'
  )
  t.equal(
    subscription.ignoredBecause(set() as Extract<SubscriptionCommand, { type: 'SetPlan' }>, { subscription: sub({ status: 'active' }) }),
    null,
    'nothing to ignore'
  )
})

t.test('SetPlan: past due since', async t => {
  const s = spec(t, subscription)
  const T = new Date(105_000).toISOString()
  s([started()])
    .when(set({ status: 'past_due', as_of: 105 }))
    .then([changed({ subscription: sub({ status: 'past_due', past_due_since: T, stripe_as_of: 105 }) })], 'past due since the Stripe event that said so')
  s([started(), changed({ subscription: sub({ status: 'past_due', past_due_since: T, stripe_as_of: 105 }) })])
    .when(set({ status: 'past_due', cancel_at_period_end: true, as_of: 200 }))
    .then(
      [changed({ subscription: sub({ status: 'past_due', past_due_since: T, cancel_at_period_end: true, stripe_as_of: 200 }) })],
      'kept while the subscription stays past due'
    )
  s([started(), changed({ subscription: sub({ status: 'past_due', past_due_since: T, stripe_as_of: 105 }) })])
    .when(set({ as_of: 300 }))
    .then([changed({ subscription: sub({ stripe_as_of: 300 }) })], 'dropped when it is paid (active)')
})

t.test('planInEffect: which statuses hold the paid plan (Stripe Subscription `status`)', async t => {
  const at = (iso: string): Date => new Date(iso)
  const T0 = '2026-11-22T10:00:00.000Z'
  for (const status of ['active', 'trialing'] as const) t.equal(subscription.planInEffect(sub({ status }), at(T0)), 'pro', status)
  for (const status of ['incomplete', 'unpaid'] as const) t.equal(subscription.planInEffect(sub({ status }), at(T0)), 'free', `${status}: Free's caps`)
  const pastDue = sub({ status: 'past_due', past_due_since: T0 })
  t.equal(subscription.planInEffect(pastDue, at('2026-11-29T09:59:59.000Z')), 'pro', 'past_due within 7 days keeps the plan')
  t.equal(subscription.planInEffect(pastDue, at('2026-11-29T10:00:00.000Z')), 'free', "past_due 7 days on: Free's caps")
  t.equal(
    subscription.planInEffect(sub({ status: 'past_due', stripe_as_of: Date.parse(T0) / 1000 }), at('2026-11-30T10:00:00.000Z')),
    'free',
    'a past_due recorded before past_due_since: the grace counts from its latest Stripe event'
  )
  t.equal(subscription.planInEffect(sub({ status: 'past_due', stripe_as_of: null }), at(T0)), 'free', 'past_due with no time at all: Free')
  t.equal(subscription.planInEffect(free(), at(T0)), 'free', 'Free')
  t.equal(subscription.PAST_DUE_GRACE_S, 7 * 86_400)
})

t.test('EndPlan', async t => {
  const s = spec(t, subscription)
  s([started()]).when(end('sub_other', 103)).thenNothing("another subscription's end changes nothing")
  s([started()]).when(end('sub_1', 103)).then([ended()], 'the current subscription ends: back on Free, the customer kept')
  s([])
    .when(end(null, null, 'operator'))
    .thenNothing('Free cannot end')
  s([started()]).when(end('sub_1', 99)).thenNothing('an end older than the latest applied event changes nothing')
  s([started()])
    .when(end('sub_1', 100))
    .then(
      [ended({ subscription: free({ stripe_customer: 'cus_1', stripe_as_of: 100, ended_stripe_subscription: 'sub_1' }) })],
      'an end of the same second as the latest update ends the plan'
    )
  s([started()])
    .when(end(null, null, 'operator'))
    .then([ended({ subscription: free({ stripe_customer: 'cus_1', stripe_as_of: 100 }), source: 'operator' })], 'an operator ends whichever plan is current')
})

t.test('LinkCustomer', async t => {
  const s = spec(t, subscription)
  s([started()]).when(link('cus_1')).thenNothing('the same customer')
  s([]).when(link('cus_9')).then([linked()], 'a first checkout links its customer to the Free subscription')
  s([started()])
    .when(link('cus_2'))
    .then([linked({ subscription: sub({ stripe_customer: 'cus_2' }) })], 'another customer is linked to the current subscription')
  s([started(), linked({ subscription: sub({ stripe_customer: 'cus_2' }) })]).thenState(
    st => st.subscription,
    sub({ stripe_customer: 'cus_2' }),
    'the latest event carries the whole subscription'
  )
})
