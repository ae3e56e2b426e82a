import { randomBytes } from 'node:crypto'
import type { WebhookEndpointCreated } from '../../domain/webhook/events.ts'
import type { Environment } from '../../domain/shared.ts'
import { validateTargetUrl } from '../../domain/webhook/target.ts'
import { planOf } from '../../projections/subscriptions.ts'
import type { CommandContext } from '../context.ts'
import { checkEvents, checkDescription } from '../../domain/webhook/webhook-input.ts'
import { webhooks } from './aggregate.ts'

/**
 * POST /api/webhooks: registers an endpoint on the account's `webhooks-<user>` stream with
 * a new signing secret (`whsec_` + 32 random bytes, base64url), sealed with the account's
 * data key in the event and returned once. The plan's cap is decided on that stream.
 * Reads the plan from the `subscriptions` read model: safe because a plan only widens or
 * narrows caps between billing events, seconds apart at most from the stream, and every
 * cap is decided again on the aggregate's own stream at the append (a stale plan admits
 * at most what the plan allowed a moment ago; nothing is spent or granted on it). The
 * endpoint is of the creating credential's `environment` (a session's: live) and hears of
 * that environment's jobs and batches only (issue 42 item 10); the cap counts both.
 * @throws DomainError invalid `create_webhook.invalid_url|empty_events|invalid_events|invalid_description`;
 *   forbidden `create_webhook.limit_reached` (the plan's `max_webhooks` endpoints not deleted).
 */
export async function createWebhook(
  ctx: CommandContext,
  input: { user_uuid: string; environment: Environment; url: string; events: string[]; description?: string | null; actor: string }
): Promise<{ webhook_uuid: string; endpoint: WebhookEndpointCreated['data']; secret: string; position: number }> {
  const url = validateTargetUrl('create_webhook', input.url, ctx.config.webhooks.allow_private_targets)
  const events = checkEvents('create_webhook', input.events)
  const description = checkDescription('create_webhook', input.description) ?? null
  const uuid = ctx.newId()
  const secret = `whsec_${randomBytes(32).toString('base64url')}`
  const r = await webhooks.handle(
    ctx,
    input.user_uuid,
    {
      type: 'CreateWebhook',
      data: {
        webhook_uuid: uuid,
        user_uuid: input.user_uuid,
        environment: input.environment,
        // The URL and description are the account's data: sealed like the address (crypto-shredding).
        url: await ctx.sealer.seal(input.user_uuid, url),
        events,
        description: description === null ? null : await ctx.sealer.seal(input.user_uuid, description),
        secret: await ctx.sealer.seal(input.user_uuid, secret),
        created_at: ctx.now().toISOString(),
        max_endpoints: (await planOf(ctx, ctx.config.plans, input.user_uuid)).max_webhooks
      }
    },
    { actor: input.actor }
  )
  const endpoint = r.events.find((e): e is WebhookEndpointCreated => e.type === 'WebhookEndpointCreated')!.data
  return { webhook_uuid: uuid, endpoint, secret, position: r.position }
}
