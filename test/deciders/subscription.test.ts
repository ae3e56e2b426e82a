import t from 'tap'
import * as subscription from '../../src/domain/subscription/decider.ts'
import type { SubscriptionCommand } from '../../src/domain/subscription/decider.ts'
import type { BillingCustomerLinked, PlanChanged, PlanEnded, PlanStarted, Subscription } from '../../src/domain/subscription/events.ts'
import { build, spec } from '../support/decider-spec.ts'

// An account's subscription (stream `subscription-<user>`; every event carries it whole).
// Interface section 2: "active subscription of the caller; a Free plan if the caller never
// subscribed"; section 8: plan-driven limits. Stripe may deliver events late and out of order
// (Stripe docs, "Event ordering"): one older than the latest applied changes nothing.

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'

// What the events carry: a paid subscription, and Free as the interface describes it.
const sub = (over: Partial<Subscription> = {}): Subscription => ({ user_uuid: U, plan: 'pro', cycle: 'yearly', status: 'active', current_period_end: '2027-11-22T10:00:00.000Z', cancel_at_period_end: false, stripe_customer: 'cus_1', stripe_subscription: 'sub_1', stripe_as_of: 100, ...over })
const free = (over: Partial<Subscription> = {}): Subscription => ({ user_uuid: U, plan: 'free', cycle: null, status: 'active', current_period_end: null, cancel_at_period_end: false, stripe_customer: null, stripe_subscription: null, stripe_as_of: null, ...over })

// Event builders.
const started = build<PlanStarted>('PlanStarted', { user_uuid: U, subscription: sub(), source: 'billing', at: now })
const changed = build<PlanChanged>('PlanChanged', { user_uuid: U, subscription: sub(), previous_plan: 'pro', source: 'billing', at: now })
const ended = build<PlanEnded>('PlanEnded', { user_uuid: U, subscription: free({ stripe_customer: 'cus_1', stripe_as_of: 103 }), previous_plan: 'pro', source: 'billing', at: now })
const linked = build<BillingCustomerLinked>('BillingCustomerLinked', { user_uuid: U, subscription: free({ stripe_customer: 'cus_9' }), source: 'billing', at: now })

// Command builders.
const set = (over: Partial<Extract<SubscriptionCommand, { type: 'SetPlan' }>['data']> = {}): SubscriptionCommand =>
  ({ type: 'SetPlan', data: { user_uuid: U, plan: 'pro', cycle: 'yearly', status: 'active', current_period_end: '2027-11-22T10:00:00.000Z', cancel_at_period_end: false, stripe_subscription: 'sub_1', stripe_customer: 'cus_1', source: 'billing', as_of: 100, now, ...over } })
const end = (stripeSubscription: string | null, asOf: number | null, source: 'billing' | 'operator' = 'billing'): SubscriptionCommand =>
  ({ type: 'EndPlan', data: { user_uuid: U, stripe_subscription: stripeSubscription, source, as_of: asOf, now } })
const link = (customer: string): SubscriptionCommand => ({ type: 'LinkCustomer', data: { user_uuid: U, stripe_customer: customer, now } })

t.test('SetPlan', async t => {
  const s = spec(t, subscription)
  s([]).when(set()).then([started()], 'from Free, a paid plan starts')
  s([started()]).when(set({ as_of: 101 })).thenNothing('Stripe repeating the same state changes nothing')
  s([started()]).when(set({ plan: 'business', cycle: 'monthly', as_of: 102 })).then([changed({ subscription: sub({ plan: 'business', cycle: 'monthly', stripe_as_of: 102 }) })], 'another plan and cycle: changed, naming the previous plan')
  s([started()]).when(set({ plan: 'business', as_of: 99 })).thenNothing('an event older than the latest applied changes nothing')
  s([]).when(set({ current_period_end: 'next tuesday' })).thenRejects('subscription.invalid_period', 400, 'a period end that is not a date-time is refused')
  s([started()]).when(set({ status: 'past_due', source: 'operator', as_of: null }))
    .then([changed({ subscription: sub({ status: 'past_due' }), source: 'operator' })], 'an operator\'s change carries no Stripe time and keeps the latest one')
  s([started()]).when(set({ cancel_at_period_end: true, as_of: 102 })).then([changed({ subscription: sub({ cancel_at_period_end: true, stripe_as_of: 102 }) })], 'a cancellation at period end is a change')
  s([started()]).when(set({ plan: 'free', as_of: 103 })).then([ended()], 'setting Free ends the paid plan')
  s([]).when(set({ plan: 'free' })).thenNothing('setting Free on Free: nothing')
  s([linked()]).when(set({ stripe_customer: null })).then([started({ subscription: sub({ stripe_customer: 'cus_9' }) })], 'a plan set without a customer keeps the linked one')
  s([started(), ended()]).when(set({ as_of: 104 })).then([started({ subscription: sub({ stripe_as_of: 104 }) })], 'after the plan ended, a paid plan starts again from Free')
})

t.test('EndPlan', async t => {
  const s = spec(t, subscription)
  s([started()]).when(end('sub_other', 103)).thenNothing('another subscription\'s end changes nothing')
  s([started()]).when(end('sub_1', 103)).then([ended()], 'the current subscription ends: back on Free, the customer kept')
  s([]).when(end(null, null, 'operator')).thenNothing('Free cannot end')
  s([started()]).when(end('sub_1', 99)).thenNothing('an end older than the latest applied event changes nothing')
  s([started()]).when(end(null, null, 'operator')).then([ended({ subscription: free({ stripe_customer: 'cus_1', stripe_as_of: 100 }), source: 'operator' })], 'an operator ends whichever plan is current')
})

t.test('LinkCustomer', async t => {
  const s = spec(t, subscription)
  s([started()]).when(link('cus_1')).thenNothing('the same customer')
  s([]).when(link('cus_9')).then([linked()], 'a first checkout links its customer to the Free subscription')
  s([started()]).when(link('cus_2')).then([linked({ subscription: sub({ stripe_customer: 'cus_2' }) })], 'another customer is linked to the current subscription')
  s([started(), linked({ subscription: sub({ stripe_customer: 'cus_2' }) })]).thenState(st => st.subscription, sub({ stripe_customer: 'cus_2' }), 'the latest event carries the whole subscription')
})
