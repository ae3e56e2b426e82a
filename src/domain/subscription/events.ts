import type { Event } from '../shared.ts'
import type { Cycle } from '../plans.ts'

/** Statuses of a subscription, as Stripe names them (a Free account is `active`). */
const SUBSCRIPTION_STATUSES = ['active', 'trialing', 'past_due', 'unpaid', 'incomplete'] as const
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number]

/**
 * An account's subscription as every event of `subscription-<user>` carries it whole
 * (each event is a snapshot: loading reads the latest one only).
 */
export interface Subscription {
  user_uuid: string
  /** Plan code; `free` when the account never subscribed or its plan ended. */
  plan: string
  /** Null on Free. */
  cycle: Cycle | null
  status: SubscriptionStatus
  /** End of the paid period (RFC 3339), null on Free or when set by an operator without one. */
  current_period_end: string | null
  cancel_at_period_end: boolean
  stripe_customer: string | null
  stripe_subscription: string | null
  /** When Stripe made the latest event applied (Unix s): an older one arriving late changes nothing. */
  stripe_as_of: number | null
  /**
   * Only while `status` is `past_due`: when the current subscription became past due
   * (RFC 3339; the `created` time of the Stripe event that first said so). The paid plan is
   * held for `PAST_DUE_GRACE_S` after it (see `planInEffect`). Absent otherwise.
   */
  past_due_since?: string
  /**
   * Only on Free after Stripe ended a subscription (`customer.subscription.deleted`, or a
   * status `canceled` / `incomplete_expired`): its id. Stripe documents both statuses as
   * terminal, so no later event of that subscription starts a plan again. Absent otherwise.
   */
  ended_stripe_subscription?: string
}

/** Who changed it: Stripe's webhooks (`billing`) or `svc subscription set` (`operator`). */
export type SubscriptionSource = 'billing' | 'operator'

interface Change {
  user_uuid: string
  subscription: Subscription
  source: SubscriptionSource
  at: string
  /**
   * On PlanStarted and PlanChanged by an operator who grants the new period's tokens (as an
   * invoice would): the flow `plan-grant` grants them from this event, once (grant id
   * `operator-<event id>`). Absent otherwise.
   */
  grant_period?: boolean
}

/** A paid plan began (from Free). */
export type PlanStarted = Event<'PlanStarted', Change>
/** The paid plan, cycle, status, period or cancellation changed. */
export type PlanChanged = Event<'PlanChanged', Change & { previous_plan: string }>
/** The paid plan ended: the account is on Free again. */
export type PlanEnded = Event<'PlanEnded', Change & { previous_plan: string }>
/** The account's Stripe customer, made by its first checkout. */
export type BillingCustomerLinked = Event<'BillingCustomerLinked', Change>

export type SubscriptionEvent = PlanStarted | PlanChanged | PlanEnded | BillingCustomerLinked
