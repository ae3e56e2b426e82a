import type { Environment } from '../../domain/shared.ts'
import type { CommandContext } from '../context.ts'
import { webhooks } from './aggregate.ts'

/**
 * DELETE /api/webhooks/{uuid}: idempotent; another account's, another environment's than
 * the caller sees (`sees`: null for a session, which sees both) or an unknown endpoint is left alone.
 */
export async function deleteWebhook(ctx: CommandContext, owner: string, sees: Environment | null, uuid: string, actor: string): Promise<number> {
  const r = await webhooks.handle(ctx, owner, { type: 'DeleteWebhook', data: { webhook_uuid: uuid, sees, now: ctx.now().toISOString() } }, { actor })
  return r.position
}
