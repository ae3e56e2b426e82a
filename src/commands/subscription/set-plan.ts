import { DomainError } from '../../domain/shared.ts'
import * as subscription from '../../domain/subscription/decider.ts'
import type { Subscription, SubscriptionSource, SubscriptionStatus } from '../../domain/subscription/events.ts'
import { findPlan, type Cycle } from '../../domain/plans.ts'
import type { CommandContext } from '../context.ts'
import { handle } from '../command-handler.ts'
import { subscriptionStream } from './subscription-stream.ts'

export interface PlanChange {
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
  actor: string
}

/**
 * Moves an account to a plan of the catalogue (or Free), as billing and operators do. The
 * subscription decider ignores an older Stripe event, an ended or another Stripe
 * subscription, and a return to `incomplete` (`ignoredBecause`).
 * @returns the subscription after it, the position of the append (or the stream's head),
 *   whether it changed, and why not when the decider ignored it (null otherwise).
 * @throws DomainError invalid `subscription.unknown_plan` for a code not in the catalogue.
 */
export async function setPlan(
  ctx: CommandContext,
  c: PlanChange
): Promise<{ subscription: Subscription; position: number; changed: boolean; ignored: string | null }> {
  if (!findPlan(ctx.config.plans, c.plan))
    throw new DomainError('invalid', 'subscription.unknown_plan', `no plan ${c.plan}; one of: ${ctx.config.plans.plans.map(p => p.code).join(', ')}`)
  const { actor, ...data } = c
  const command = { type: 'SetPlan', data: { ...data, now: ctx.now().toISOString() } } as const
  const r = await handle(ctx, subscriptionStream(c.user_uuid), subscription, command, { actor })
  const changed = r.events.length > 0
  return {
    subscription: r.state.subscription ?? subscription.freeSubscription(c.user_uuid),
    position: r.position,
    changed,
    ignored: changed ? null : subscription.ignoredBecause(command, r.state)
  }
}
