import { DomainError, noEventsForUnknown } from '../shared.ts'
import { FREE, type Cycle } from '../plans.ts'
import type { Subscription, SubscriptionEvent, SubscriptionSource, SubscriptionStatus } from './events.ts'

/** The subscription as decisions need it: the latest event's (every event carries it whole). */
export interface SubscriptionState {
  subscription: Subscription | null
}

export const initialState = (): SubscriptionState => ({ subscription: null })

export function evolve(_state: SubscriptionState, event: SubscriptionEvent): SubscriptionState {
  return { subscription: event.data.subscription }
}

/** Every event carries the whole state: loading the stream reads its latest event only (constant cost). */
export const snapshot = { types: ['PlanStarted', 'PlanChanged', 'PlanEnded', 'BillingCustomerLinked'] } as const

/** Free, for an account that never subscribed. */
export function freeSubscription(user: string, customer: string | null = null): Subscription {
  return {
    user_uuid: user,
    plan: FREE,
    cycle: null,
    status: 'active',
    current_period_end: null,
    cancel_at_period_end: false,
    stripe_customer: customer,
    stripe_subscription: null,
    stripe_as_of: null
  }
}

export type SubscriptionCommand =
  | {
      type: 'SetPlan'
      data: {
        user_uuid: string
        plan: string
        cycle: Cycle
        status: SubscriptionStatus
        current_period_end: string | null
        cancel_at_period_end: boolean
        stripe_subscription: string | null
        stripe_customer: string | null
        source: SubscriptionSource
        /** When Stripe made the event (Unix s); null for an operator's change. */
        as_of: number | null
        /** An operator's change that grants one period's tokens, as an invoice would (recorded only when the plan or cycle changes). */
        grant_period?: boolean
        now: string
      }
    }
  | { type: 'EndPlan'; data: { user_uuid: string; stripe_subscription: string | null; source: SubscriptionSource; as_of: number | null; now: string } }
  | { type: 'LinkCustomer'; data: { user_uuid: string; stripe_customer: string; now: string } }

/**
 * How long a `past_due` subscription keeps its paid plan's caps: 7 days after it became
 * past due (Stripe retries the payment meanwhile; a payment that succeeds later makes it
 * `active` again and the plan comes back).
 */
export const PAST_DUE_GRACE_S = 7 * 86_400

const iso = (unix: number | null): string | null => (unix === null ? null : new Date(unix * 1000).toISOString())

/**
 * The plan code whose caps, rate limit, scopes and checks are in effect for `s` at `now`
 * (time as data). Stripe's subscription status model (Subscription object, `status`): a paid
 * plan is held while the subscription is `active` or `trialing`, and while it is `past_due`
 * for `PAST_DUE_GRACE_S` after `past_due_since` (for a past-due subscription recorded before
 * that field existed: after its latest Stripe event). `incomplete` (first payment not made),
 * `unpaid` (retries exhausted; also `paused`, which billing records as `unpaid`) and a
 * past-due beyond the grace hold Free's. Free stays Free.
 */
export function planInEffect(s: Subscription, now: Date): string {
  if (s.plan === FREE) return FREE
  if (s.status === 'active' || s.status === 'trialing') return s.plan
  if (s.status === 'past_due') {
    const since = s.past_due_since ?? iso(s.stripe_as_of)
    if (since !== null && now.getTime() < Date.parse(since) + PAST_DUE_GRACE_S * 1000) return s.plan
  }
  return FREE
}

const same = (a: Subscription, b: Subscription): boolean => JSON.stringify({ ...a, stripe_as_of: null }) === JSON.stringify({ ...b, stripe_as_of: null })
/** Whether a Stripe event made at `asOf` is older than the latest applied (operators' changes carry none). */
const stale = (asOf: number | null, current: Subscription): boolean => asOf !== null && current.stripe_as_of !== null && asOf < current.stripe_as_of

/**
 * Why SetPlan (to a paid plan) or EndPlan changes nothing whatever it carries, or null when
 * it may apply (it still changes nothing when it carries the current state). The rules, from
 * Stripe's documented event and status model (events may arrive late, out of order and
 * repeated; `created` is whole seconds):
 * - older: made before the latest applied Stripe event (`as_of` < `stripe_as_of`). An event
 *   of the same second is applied, in arrival order;
 * - ended: SetPlan for the Stripe subscription whose end was the latest thing applied
 *   (`ended_stripe_subscription`): `canceled` and `incomplete_expired` are terminal, so no
 *   event of it (of the same second or later) brings the plan back;
 * - not current: SetPlan naming a Stripe subscription other than the current one while a paid
 *   plan is held (not ended), or EndPlan naming one other than the current one; a subscription
 *   started after the current one ended may start a plan;
 * - back to incomplete: SetPlan with status `incomplete` for the current subscription whose
 *   status is another (Stripe: `incomplete` is a subscription's first status only; e.g. its
 *   `created` event delivered after an `updated` of the same second);
 * - EndPlan on Free: nothing to end.
 */
export function ignoredBecause(command: Extract<SubscriptionCommand, { type: 'SetPlan' | 'EndPlan' }>, state: SubscriptionState): string | null {
  const c = command.data
  const current = state.subscription ?? freeSubscription(c.user_uuid)
  if (command.type === 'EndPlan' || command.data.plan === FREE) {
    if (current.plan === FREE) return 'no paid plan to end'
    if (stale(c.as_of, current)) return `older than the latest applied Stripe event (${c.as_of} < ${current.stripe_as_of})`
    if (command.type === 'EndPlan' && c.stripe_subscription !== null && c.stripe_subscription !== current.stripe_subscription)
      return `subscription ${c.stripe_subscription} is not the current one`
    return null
  }
  const d = command.data
  if (stale(d.as_of, current)) return `older than the latest applied Stripe event (${d.as_of} < ${current.stripe_as_of})`
  if (current.plan === FREE && d.stripe_subscription !== null && current.ended_stripe_subscription === d.stripe_subscription)
    return `subscription ${d.stripe_subscription} has ended`
  if (current.plan !== FREE && current.stripe_subscription !== null && d.stripe_subscription !== current.stripe_subscription)
    return `subscription ${d.stripe_subscription ?? '(none)'} is not the current one (${current.stripe_subscription})`
  if (current.plan !== FREE && d.stripe_subscription === current.stripe_subscription && d.status === 'incomplete' && current.status !== 'incomplete')
    return `subscription ${d.stripe_subscription ?? '(none)'} is ${current.status}: it does not return to incomplete`
  return null
}

/**
 * The subscription decider (interface "Subscription": a Free plan if the caller never
 * subscribed; section 8: plan-driven limits). Plan codes arrive checked against the
 * catalogue by the command.
 * - SetPlan to a paid plan → PlanStarted from Free, PlanChanged when anything differs,
 *   nothing when nothing does (Stripe repeats events); SetPlan to `free` ends the plan.
 * - Either → nothing when `ignoredBecause` names a reason (older event; an ended Stripe
 *   subscription; another subscription than the current one; back to `incomplete`).
 * - A SetPlan to status `past_due` records `past_due_since` (kept while the same subscription
 *   stays past due): the Stripe event's time, or `now` for an operator's change.
 * - EndPlan → PlanEnded when a paid plan is current and, when the command names a Stripe
 *   subscription, it is the current one (a stale subscription's end changes nothing). An end
 *   from billing records the subscription that ended (`ended_stripe_subscription`).
 * - LinkCustomer → BillingCustomerLinked when the customer differs.
 * @throws DomainError invalid `subscription.invalid_period` for a period end that is not a date-time.
 */
export function decide(command: SubscriptionCommand, state: SubscriptionState): SubscriptionEvent[] {
  const d = command.data
  const current = state.subscription ?? freeSubscription(d.user_uuid)
  switch (command.type) {
    case 'SetPlan': {
      const c = command.data
      if (c.plan === FREE)
        return decide({ type: 'EndPlan', data: { user_uuid: c.user_uuid, stripe_subscription: null, source: c.source, as_of: c.as_of, now: c.now } }, state)
      if (ignoredBecause(command, state) !== null) return []
      if (c.current_period_end !== null && Number.isNaN(Date.parse(c.current_period_end)))
        throw new DomainError('invalid', 'subscription.invalid_period', 'current_period_end must be a date-time')
      const stillPastDue = current.plan !== FREE && current.status === 'past_due' && current.stripe_subscription === c.stripe_subscription
      const pastDueSince =
        c.status !== 'past_due' ? null : stillPastDue ? (current.past_due_since ?? iso(current.stripe_as_of) ?? iso(c.as_of) ?? c.now) : (iso(c.as_of) ?? c.now)
      const next: Subscription = {
        user_uuid: c.user_uuid,
        plan: c.plan,
        cycle: c.cycle,
        status: c.status,
        current_period_end: c.current_period_end,
        cancel_at_period_end: c.cancel_at_period_end,
        stripe_customer: c.stripe_customer ?? current.stripe_customer,
        stripe_subscription: c.stripe_subscription,
        stripe_as_of: c.as_of ?? current.stripe_as_of,
        ...(pastDueSince !== null && { past_due_since: pastDueSince })
      }
      if (same(next, current)) return []
      // A new period (another plan or cycle) that the operator grants: the plan-grant flow grants it from this event.
      const grant = c.grant_period === true && (current.plan !== c.plan || current.cycle !== c.cycle) ? { grant_period: true } : {}
      if (current.plan === FREE) return [{ type: 'PlanStarted', data: { user_uuid: c.user_uuid, subscription: next, source: c.source, at: c.now, ...grant } }]
      return [{ type: 'PlanChanged', data: { user_uuid: c.user_uuid, subscription: next, previous_plan: current.plan, source: c.source, at: c.now, ...grant } }]
    }
    case 'EndPlan': {
      const c = command.data
      if (ignoredBecause(command, state) !== null) return []
      // Stripe said this subscription ended (terminal): none of its events starts a plan again.
      const ended = c.source === 'billing' ? (c.stripe_subscription ?? current.stripe_subscription) : null
      const free: Subscription = {
        ...freeSubscription(c.user_uuid, current.stripe_customer),
        stripe_as_of: c.as_of ?? current.stripe_as_of,
        ...(ended !== null && { ended_stripe_subscription: ended })
      }
      return [{ type: 'PlanEnded', data: { user_uuid: c.user_uuid, subscription: free, previous_plan: current.plan, source: c.source, at: c.now } }]
    }
    case 'LinkCustomer': {
      const c = command.data
      if (current.stripe_customer === c.stripe_customer) return []
      return [
        {
          type: 'BillingCustomerLinked',
          data: { user_uuid: c.user_uuid, subscription: { ...current, stripe_customer: c.stripe_customer }, source: 'billing', at: c.now }
        }
      ]
    }
    default:
      return noEventsForUnknown(command)
  }
}
