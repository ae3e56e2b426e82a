import type { WebhooksState } from '../../domain/webhook/decider.ts'
import type { CommandContext } from '../context.ts'
import { webhooks } from './aggregate.ts'

/**
 * What the deliveries' commands may read of an account's webhook endpoints (nothing here
 * appends): their state as of now. Cost: one stream's load (bounded by the plan's
 * endpoints).
 */
export async function readWebhooks(ctx: CommandContext, owner: string): Promise<WebhooksState> {
  return (await webhooks.load(ctx, owner)).state
}
