import type { CommandContext } from '../context.ts'
import { subscriptions } from './aggregate.ts'

/** Records the account's Stripe customer (idempotent). */
export async function linkCustomer(ctx: CommandContext, owner: string, customer: string): Promise<number> {
  const r = await subscriptions.handle(
    ctx,
    owner,
    { type: 'LinkCustomer', data: { user_uuid: owner, stripe_customer: customer, now: ctx.now().toISOString() } },
    { actor: 'billing' }
  )
  return r.position
}
