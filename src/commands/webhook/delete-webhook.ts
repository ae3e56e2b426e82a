import * as webhook from '../../domain/webhook/decider.ts'
import type { CommandContext } from '../context.ts'
import { handle } from '../command-handler.ts'
import { webhooksStream } from './webhook-stream.ts'

/** DELETE /api/webhooks/{uuid}: idempotent; another account's or an unknown endpoint is left alone. */
export async function deleteWebhook(ctx: CommandContext, owner: string, uuid: string, actor: string): Promise<number> {
  const r = await handle(ctx, webhooksStream(owner), webhook, { type: 'DeleteWebhook', data: { webhook_uuid: uuid, now: ctx.now().toISOString() } }, { actor })
  return r.position
}
