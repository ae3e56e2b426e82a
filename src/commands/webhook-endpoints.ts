import { randomBytes } from 'node:crypto'
import { DomainError } from '../domain/shared.ts'
import * as webhook from '../domain/webhook/decider.ts'
import { WEBHOOK_EVENTS, type WebhookEndpointCreated, type WebhookEventKind } from '../domain/webhook/events.ts'
import { validateTargetUrl } from '../domain/webhook/target.ts'
import { planOf } from '../projections/subscriptions.ts'
import { type CommandContext } from './context.ts'
import { handle } from './command-handler.ts'

/** Longest endpoint description (characters). */
export const MAX_DESCRIPTION = 500

/** The stream of an account's webhook endpoints. */
export const webhooksStream = (owner: string): string => `webhooks-${owner}`

function checkEvents (operation: string, events: string[]): WebhookEventKind[] {
  if (events.length === 0) throw new DomainError('invalid', `${operation}.empty_events`, 'events must not be empty')
  const unknown = events.filter(e => !(WEBHOOK_EVENTS as readonly string[]).includes(e))
  if (unknown.length > 0) throw new DomainError('invalid', `${operation}.invalid_events`, `unknown events: ${unknown.join(', ')}; known: ${WEBHOOK_EVENTS.join(', ')}`)
  return WEBHOOK_EVENTS.filter(e => events.includes(e))
}

function checkDescription (operation: string, description: string | null | undefined): string | null | undefined {
  if (description === undefined || description === null) return description
  const d = description.trim()
  if (d.length > MAX_DESCRIPTION) throw new DomainError('invalid', `${operation}.invalid_description`, `description must be at most ${MAX_DESCRIPTION} characters`)
  return d === '' ? null : d
}

/**
 * POST /api/webhooks: registers an endpoint on the account's `webhooks-<user>` stream with
 * a new signing secret (`whsec_` + 32 random bytes, base64url), sealed with the account's
 * data key in the event and returned once. The plan's cap is decided on that stream.
 * @throws DomainError invalid `create_webhook.invalid_url|empty_events|invalid_events|invalid_description`;
 *   forbidden `create_webhook.limit_reached` (the plan's `max_webhooks` endpoints not deleted).
 */
export async function createWebhook (ctx: CommandContext, input: { user_uuid: string, url: string, events: string[], description?: string | null, actor: string }): Promise<{ webhook_uuid: string, endpoint: WebhookEndpointCreated['data'], secret: string, position: number }> {
  const url = validateTargetUrl('create_webhook', input.url, ctx.config.webhooks.allow_private_targets)
  const events = checkEvents('create_webhook', input.events)
  const description = checkDescription('create_webhook', input.description) ?? null
  const uuid = ctx.newId()
  const secret = `whsec_${randomBytes(32).toString('base64url')}`
  const r = await handle(ctx, webhooksStream(input.user_uuid), webhook, {
    type: 'CreateWebhook',
    data: {
      webhook_uuid: uuid,
      user_uuid: input.user_uuid,
      // The URL and description are the account's data: sealed like the address (crypto-shredding).
      url: await ctx.sealer.seal(input.user_uuid, url),
      events,
      description: description === null ? null : await ctx.sealer.seal(input.user_uuid, description),
      secret: await ctx.sealer.seal(input.user_uuid, secret),
      created_at: ctx.now().toISOString(),
      max_endpoints: (await planOf(ctx, ctx.config.plans, input.user_uuid)).max_webhooks
    }
  }, { actor: input.actor })
  const endpoint = r.events.find((e): e is WebhookEndpointCreated => e.type === 'WebhookEndpointCreated')!.data
  return { webhook_uuid: uuid, endpoint, secret, position: r.position }
}

/**
 * PATCH /api/webhooks/{uuid}: changes any of `url`, `events`, `description`, `status`
 * (`active` re-enables a disabled endpoint and clears its failure count; `disabled`
 * stops deliveries). Omitted fields keep their value.
 * @throws DomainError invalid `update_webhook.invalid_url|empty_events|invalid_events|invalid_description`;
 *   not_found `update_webhook.not_found`.
 */
export async function updateWebhook (ctx: CommandContext, owner: string, uuid: string, input: { url?: string, events?: string[], description?: string | null, status?: 'active' | 'disabled' }, actor: string): Promise<number> {
  const url = input.url === undefined ? undefined : validateTargetUrl('update_webhook', input.url, ctx.config.webhooks.allow_private_targets)
  const description = input.description === undefined ? undefined : checkDescription('update_webhook', input.description)
  const r = await handle(ctx, webhooksStream(owner), webhook, {
    type: 'UpdateWebhook',
    data: {
      webhook_uuid: uuid,
      ...(url !== undefined && { url: await ctx.sealer.seal(owner, url) }),
      ...(input.events !== undefined && { events: checkEvents('update_webhook', input.events) }),
      ...(description !== undefined && { description: description === null ? null : await ctx.sealer.seal(owner, description) }),
      ...(input.status !== undefined && { status: input.status }),
      now: ctx.now().toISOString()
    }
  }, { actor })
  return r.position
}

/** DELETE /api/webhooks/{uuid}: idempotent; another account's or an unknown endpoint is left alone. */
export async function deleteWebhook (ctx: CommandContext, owner: string, uuid: string, actor: string): Promise<number> {
  const r = await handle(ctx, webhooksStream(owner), webhook, { type: 'DeleteWebhook', data: { webhook_uuid: uuid, now: ctx.now().toISOString() } }, { actor })
  return r.position
}
