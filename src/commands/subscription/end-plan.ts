import * as subscription from '../../domain/subscription/decider.ts'
import type { SubscriptionSource } from '../../domain/subscription/events.ts'
import type { CommandContext } from '../context.ts'
import { subscriptions } from './aggregate.ts'

/**
 * Ends the paid plan (back to Free); a named Stripe subscription must be the current one.
 * @returns the position, whether it changed, and why not when the decider ignored it.
 */
export async function endPlan(
  ctx: CommandContext,
  c: { user_uuid: string; stripe_subscription: string | null; source: SubscriptionSource; as_of: number | null; actor: string }
): Promise<{ position: number; changed: boolean; ignored: string | null }> {
  const command = {
    type: 'EndPlan',
    data: { user_uuid: c.user_uuid, stripe_subscription: c.stripe_subscription, source: c.source, as_of: c.as_of, now: ctx.now().toISOString() }
  } as const
  const r = await subscriptions.handle(ctx, c.user_uuid, command, { actor: c.actor })
  const changed = r.events.length > 0
  return { position: r.position, changed, ignored: changed ? null : subscription.ignoredBecause(command, r.state) }
}
