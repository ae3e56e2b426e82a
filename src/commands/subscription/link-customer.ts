import * as subscription from '../../domain/subscription/decider.ts'
import type { CommandContext } from '../context.ts'
import { handle } from '../command-handler.ts'
import { subscriptionStream } from './subscription-stream.ts'

/** Records the account's Stripe customer (idempotent). */
export async function linkCustomer(ctx: CommandContext, owner: string, customer: string): Promise<number> {
  const r = await handle(
    ctx,
    subscriptionStream(owner),
    subscription,
    { type: 'LinkCustomer', data: { user_uuid: owner, stripe_customer: customer, now: ctx.now().toISOString() } },
    { actor: 'billing' }
  )
  return r.position
}
