import { DomainError } from '../../domain/shared.ts'
import * as subscription from '../../domain/subscription/decider.ts'
import type { Subscription } from '../../domain/subscription/events.ts'
import { findPlan } from '../../domain/plans.ts'
import type { CommandContext } from '../context.ts'
import type { HandleResult } from '../../eventsourcing/command-handler.ts'
import { subscriptions } from './aggregate.ts'

/** A SetPlan of the subscription decider, without its time (the context's clock gives it), with the actor to record. */
export type PlanChange = Omit<Extract<subscription.SubscriptionCommand, { type: 'SetPlan' }>['data'], 'now'> & { actor: string }

/**
 * Moves an account to a plan of the catalogue (or Free), as billing and operators do. The
 * subscription decider ignores an older Stripe event, an ended or another Stripe
 * subscription, and a return to `incomplete` (`ignoredBecause`).
 * @returns the subscription after it, the position of the append (or the stream's head),
 *   whether it changed, why not when the decider ignored it (null otherwise), and the
 *   events appended (a flow's trigger).
 * @throws DomainError invalid `subscription.unknown_plan` for a code not in the catalogue.
 */
export async function setPlan(
  ctx: CommandContext,
  c: PlanChange
): Promise<{ subscription: Subscription; position: number; changed: boolean; ignored: string | null; recorded: HandleResult<unknown, unknown>['recorded'] }> {
  if (!findPlan(ctx.config.plans, c.plan))
    throw new DomainError('invalid', 'subscription.unknown_plan', `no plan ${c.plan}; one of: ${ctx.config.plans.plans.map(p => p.code).join(', ')}`)
  const { actor, ...data } = c
  const command = { type: 'SetPlan', data: { ...data, now: ctx.now().toISOString() } } as const
  const r = await subscriptions.handle(ctx, c.user_uuid, command, { actor })
  const changed = r.events.length > 0
  return {
    subscription: r.state.subscription ?? subscription.freeSubscription(c.user_uuid),
    position: r.position,
    changed,
    ignored: changed ? null : subscription.ignoredBecause(command, r.state),
    recorded: r.recorded
  }
}
