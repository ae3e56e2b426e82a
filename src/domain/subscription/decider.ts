import { DomainError } from '../shared.ts'
import { FREE, type Cycle } from '../plans.ts'
import type { Subscription, SubscriptionEvent, SubscriptionSource, SubscriptionStatus } from './events.ts'

/** The subscription as decisions need it: the latest event's (every event carries it whole). */
export interface SubscriptionState { subscription: Subscription | null }

export const initialState = (): SubscriptionState => ({ subscription: null })

export function evolve (_state: SubscriptionState, event: SubscriptionEvent): SubscriptionState {
  return { subscription: event.data.subscription }
}

/** Every event carries the whole state: loading the stream reads its latest event only (constant cost). */
export const snapshot = { types: ['PlanStarted', 'PlanChanged', 'PlanEnded', 'BillingCustomerLinked'] } as const

/** Free, for an account that never subscribed. */
export function freeSubscription (user: string, customer: string | null = null): Subscription {
  return { user_uuid: user, plan: FREE, cycle: null, status: 'active', current_period_end: null, cancel_at_period_end: false, stripe_customer: customer, stripe_subscription: null, stripe_as_of: null }
}

export type SubscriptionCommand =
  | { type: 'SetPlan', data: { user_uuid: string, plan: string, cycle: Cycle, status: SubscriptionStatus, current_period_end: string | null, cancel_at_period_end: boolean, stripe_subscription: string | null, stripe_customer: string | null, source: SubscriptionSource, as_of: number | null, now: string } }
  | { type: 'EndPlan', data: { user_uuid: string, stripe_subscription: string | null, source: SubscriptionSource, as_of: number | null, now: string } }
  | { type: 'LinkCustomer', data: { user_uuid: string, stripe_customer: string, now: string } }

const same = (a: Subscription, b: Subscription): boolean => JSON.stringify({ ...a, stripe_as_of: null }) === JSON.stringify({ ...b, stripe_as_of: null })
/** Whether a Stripe event made at `asOf` is older than the latest applied (operators' changes carry none). */
const stale = (asOf: number | null, current: Subscription): boolean => asOf !== null && current.stripe_as_of !== null && asOf < current.stripe_as_of

/**
 * The subscription decider (interface "Subscription": a Free plan if the caller never
 * subscribed; section 8: plan-driven limits). Plan codes arrive checked against the
 * catalogue by the command.
 * - SetPlan to a paid plan → PlanStarted from Free, PlanChanged when anything differs,
 *   nothing when nothing does (Stripe repeats events); SetPlan to `free` ends the plan.
 * - Either, from a Stripe event older than the latest applied (`as_of`): nothing.
 * - EndPlan → PlanEnded when a paid plan is current and, when the command names a Stripe
 *   subscription, it is the current one (a stale subscription's end changes nothing).
 * - LinkCustomer → BillingCustomerLinked when the customer differs.
 * @throws DomainError invalid `subscription.invalid_period` for a period end that is not a date-time.
 */
export function decide (command: SubscriptionCommand, state: SubscriptionState): SubscriptionEvent[] {
  const d = command.data
  const current = state.subscription ?? freeSubscription(d.user_uuid)
  switch (command.type) {
    case 'SetPlan': {
      const c = command.data
      if (c.plan === FREE) return decide({ type: 'EndPlan', data: { user_uuid: c.user_uuid, stripe_subscription: null, source: c.source, as_of: c.as_of, now: c.now } }, state)
      if (stale(c.as_of, current)) return []
      if (c.current_period_end !== null && Number.isNaN(Date.parse(c.current_period_end))) throw new DomainError('invalid', 'subscription.invalid_period', 'current_period_end must be a date-time')
      const next: Subscription = { user_uuid: c.user_uuid, plan: c.plan, cycle: c.cycle, status: c.status, current_period_end: c.current_period_end, cancel_at_period_end: c.cancel_at_period_end, stripe_customer: c.stripe_customer ?? current.stripe_customer, stripe_subscription: c.stripe_subscription, stripe_as_of: c.as_of ?? current.stripe_as_of }
      if (same(next, current)) return []
      if (current.plan === FREE) return [{ type: 'PlanStarted', data: { user_uuid: c.user_uuid, subscription: next, source: c.source, at: c.now } }]
      return [{ type: 'PlanChanged', data: { user_uuid: c.user_uuid, subscription: next, previous_plan: current.plan, source: c.source, at: c.now } }]
    }
    case 'EndPlan': {
      const c = command.data
      if (current.plan === FREE || stale(c.as_of, current)) return []
      if (c.stripe_subscription !== null && c.stripe_subscription !== current.stripe_subscription) return []
      return [{ type: 'PlanEnded', data: { user_uuid: c.user_uuid, subscription: { ...freeSubscription(c.user_uuid, current.stripe_customer), stripe_as_of: c.as_of ?? current.stripe_as_of }, previous_plan: current.plan, source: c.source, at: c.now } }]
    }
    case 'LinkCustomer': {
      const c = command.data
      if (current.stripe_customer === c.stripe_customer) return []
      return [{ type: 'BillingCustomerLinked', data: { user_uuid: c.user_uuid, subscription: { ...current, stripe_customer: c.stripe_customer }, source: 'billing', at: c.now } }]
    }
    default: {
      const _exhaustive: never = command
      return []
    }
  }
}
