import type { CommandContext } from '../context.ts'
import { webhooks } from './aggregate.ts'

/** DELETE /api/webhooks/{uuid}: idempotent; another account's or an unknown endpoint is left alone. */
export async function deleteWebhook(ctx: CommandContext, owner: string, uuid: string, actor: string): Promise<number> {
  const r = await webhooks.handle(ctx, owner, { type: 'DeleteWebhook', data: { webhook_uuid: uuid, now: ctx.now().toISOString() } }, { actor })
  return r.position
}
