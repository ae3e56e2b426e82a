import * as subscription from '../../domain/subscription/decider.ts'
import type { Subscription } from '../../domain/subscription/events.ts'
import type { CommandContext } from '../context.ts'
import { subscriptions } from './aggregate.ts'

/**
 * What billing's commands and the flows may read of an account's subscription (nothing
 * here appends): its current plan, the Free plan when it never had another. Cost: one
 * stream's load.
 */
export async function loadSubscription(ctx: CommandContext, owner: string): Promise<Subscription> {
  return (await subscriptions.load(ctx, owner)).state.subscription ?? subscription.freeSubscription(owner)
}
