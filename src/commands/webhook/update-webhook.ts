import { validateTargetUrl } from '../../domain/webhook/target.ts'
import type { Environment } from '../../domain/shared.ts'
import type { CommandContext } from '../context.ts'
import { checkEvents, checkDescription } from '../../domain/webhook/webhook-input.ts'
import { webhooks } from './aggregate.ts'

/**
 * PATCH /api/webhooks/{uuid}: changes any of `url`, `events`, `description`, `status`
 * (`active` re-enables a disabled endpoint and clears its failure count; `disabled`
 * stops deliveries). Omitted fields keep their value. `sees`: the environment the caller
 * sees (null for a session: both); another's endpoint is not found (issue 42 item 10).
 * @throws DomainError invalid `update_webhook.invalid_url|empty_events|invalid_events|invalid_description`;
 *   not_found `update_webhook.not_found`.
 */
export async function updateWebhook(
  ctx: CommandContext,
  owner: string,
  sees: Environment | null,
  uuid: string,
  input: { url?: string; events?: string[]; description?: string | null; status?: 'active' | 'disabled' },
  actor: string
): Promise<number> {
  const url = input.url === undefined ? undefined : validateTargetUrl('update_webhook', input.url, ctx.config.webhooks.allow_private_targets)
  const description = input.description === undefined ? undefined : checkDescription('update_webhook', input.description)
  const r = await webhooks.handle(
    ctx,
    owner,
    {
      type: 'UpdateWebhook',
      data: {
        webhook_uuid: uuid,
        sees,
        ...(url !== undefined && { url: await ctx.sealer.seal(owner, url) }),
        ...(input.events !== undefined && { events: checkEvents('update_webhook', input.events) }),
        ...(description !== undefined && { description: description === null ? null : await ctx.sealer.seal(owner, description) }),
        ...(input.status !== undefined && { status: input.status }),
        now: ctx.now().toISOString()
      }
    },
    { actor }
  )
  return r.position
}
