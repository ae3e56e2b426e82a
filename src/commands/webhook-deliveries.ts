import { v5 as uuidv5 } from 'uuid'
import { DomainError } from '../domain/shared.ts'
import * as webhook from '../domain/webhook/decider.ts'
import * as delivery from '../domain/webhook/delivery.ts'
import type { WebhookEventKind, WebhookDeliveryAttempted, WebhookDeliveryRequested } from '../domain/webhook/events.ts'
import type { SendOutcome, WebhookSender } from '../ports/webhook-sender.ts'
import { SIGNATURE_HEADER, signatureHeader } from '../lib/webhook-signature.ts'
import type { Config } from '../config.ts'
import { type CommandContext } from './context.ts'
import { handle, load } from './command-handler.ts'
import { webhooksStream } from './webhook-endpoints.ts'

/** Retry schedule and auto-disable threshold: the `WEBHOOK_*` configuration (`config.webhooks`). */
export type DeliveryPolicy = Pick<Config['webhooks'], 'max_attempts' | 'retry_base_ms' | 'disable_after_failures'>

/** Namespace of delivery ids derived from (endpoint, event, job): one delivery per triple. */
const DELIVERY_NAMESPACE = '5b0f3c1e-8d7a-4c52-9a43-1f6e2d9b7c10'

/** The delivery id of `event` for `job_uuid` to endpoint `webhook_uuid` (UUIDv5, so requesting twice is one delivery). */
export function deliveryUuid (webhookUuid: string, event: WebhookEventKind, jobUuid: string): string {
  return uuidv5(`${webhookUuid}:${event}:${jobUuid}`, DELIVERY_NAMESPACE)
}

/**
 * Requests one delivery to an endpoint (stream `webhook_delivery-<uuid>`); idempotent.
 * @returns the delivery id and the position of its request (or of the stream's head).
 */
export async function requestDelivery (ctx: CommandContext, data: Omit<WebhookDeliveryRequested['data'], 'requested_at'>): Promise<{ delivery_uuid: string, position: number }> {
  const r = await handle(ctx, `webhook_delivery-${data.delivery_uuid}`, delivery, { type: 'RequestDelivery', data: { ...data, requested_at: ctx.now().toISOString() } }, { actor: 'webhooks', correlation_id: data.job_uuid })
  return { delivery_uuid: data.delivery_uuid, position: r.position }
}

/**
 * Delay before attempt `next` (2-based) of a delivery: `retry_base_ms` × 4^(next − 2), plus
 * up to 10% jitter (bounded exponential back-off, interface section 6 rule 1). With the
 * default 30 s base and 6 attempts: 30 s, 2 min, 8 min, 32 min, ~2 h 8 min.
 */
export function retryDelayMs (policy: DeliveryPolicy, next: number, random = Math.random): number {
  const base = policy.retry_base_ms * 4 ** Math.max(0, next - 2)
  return Math.round(base * (1 + 0.1 * random()))
}

/** The JSON body of a delivery (interface section 6): no raw email. A `batch.completed` names its batch. */
export function deliveryBody (r: WebhookDeliveryRequested['data']): string {
  if (r.event === 'batch.completed') return JSON.stringify({ event: r.event, batch_uuid: r.job_uuid, status: r.status, timestamp: r.timestamp })
  return JSON.stringify({ event: r.event, job_uuid: r.job_uuid, status: r.status, timestamp: r.timestamp })
}

/**
 * When the next attempt is due (ms from now), or null when none comes: attempts left and
 * not `410 Gone`. A 429 or 503 with `Retry-After` waits that long, but never less than the
 * schedule's delay nor more than its longest one (the delay before the last attempt).
 */
export function nextAttemptIn (policy: DeliveryPolicy, attempt: number, maxAttempts: number, outcome: SendOutcome): number | null {
  const succeeded = outcome.status !== null && outcome.status >= 200 && outcome.status < 300
  if (succeeded || outcome.status === 410 || attempt >= maxAttempts) return null
  const scheduled = retryDelayMs(policy, attempt + 1)
  const asked = outcome.retry_after_ms ?? null
  if (asked === null) return scheduled
  return Math.max(scheduled, Math.min(asked, retryDelayMs(policy, maxAttempts, () => 1)))
}

export type AttemptResult =
  | { kind: 'delivered' | 'failed', outcome: SendOutcome, attempt: number }
  | { kind: 'retry', outcome: SendOutcome, attempt: number, retry_in_ms: number }
  | { kind: 'not_due', retry_in_ms: number }
  | { kind: 'over' }

/**
 * Makes attempt `attempt` of a pending delivery, if that is its next one and it is due:
 * loads the delivery and its endpoint from the event store, signs the body with the
 * endpoint's secret (fresh `t` per attempt), POSTs it and records the attempt
 * (WebhookDeliveryAttempted; a 2xx is success; `next_attempt_at` set while attempts are
 * left). A disabled or deleted endpoint abandons the delivery (test deliveries go to
 * disabled endpoints too). A stale request (that attempt already made, or another one
 * next) does nothing: `over`. The outcome of the last attempt is counted by
 * `recordDeliveryOutcome`, driven by the recorded event.
 */
export async function attemptDelivery (ctx: CommandContext, deliveryId: string, attempt: number, send: WebhookSender, policy: DeliveryPolicy): Promise<AttemptResult> {
  const stream = `webhook_delivery-${deliveryId}`
  const { state } = await load(ctx, stream, delivery)
  if (state.status !== 'pending' || state.attempts + 1 !== attempt) return { kind: 'over' }
  const now = ctx.now()
  if (state.next_attempt_at !== null && Date.parse(state.next_attempt_at) > now.getTime()) return { kind: 'not_due', retry_in_ms: Date.parse(state.next_attempt_at) - now.getTime() }
  const r = state.request
  const endpoint = (await load(ctx, webhooksStream(r.user_uuid), webhook)).state.endpoints.get(r.webhook_uuid)
  const secret = endpoint ? await ctx.sealer.unseal(r.user_uuid, endpoint.secret) : null
  if (!endpoint || secret === null || (endpoint.status === 'disabled' && !r.test)) {
    await handle(ctx, stream, delivery, { type: 'AbandonDelivery', data: { reason: endpoint?.status === 'disabled' ? 'endpoint_disabled' : 'endpoint_deleted', now: now.toISOString() } }, { actor: 'webhooks' })
    return { kind: 'over' }
  }
  const body = deliveryBody(r)
  // Sealed since the URL is the account's data (one written before that is read as is).
  const url = endpoint.url.startsWith('sealed:') ? await ctx.sealer.unseal(r.user_uuid, endpoint.url) : endpoint.url
  if (url === null) {
    await handle(ctx, stream, delivery, { type: 'AbandonDelivery', data: { reason: 'endpoint_deleted', now: now.toISOString() } }, { actor: 'webhooks' })
    return { kind: 'over' }
  }
  const outcome = await send(url, body, {
    [SIGNATURE_HEADER]: signatureHeader(secret, Math.floor(ctx.now().getTime() / 1000), body),
    'X-Service-Event': r.event,
    'X-Service-Delivery': r.delivery_uuid,
    'X-Service-Attempt': String(attempt)
  })
  const succeeded = outcome.status !== null && outcome.status >= 200 && outcome.status < 300
  const maxAttempts = r.test ? 1 : policy.max_attempts
  const retryIn = nextAttemptIn(policy, attempt, maxAttempts, outcome)
  const at = ctx.now()
  const recorded = await handle(ctx, stream, delivery, {
    type: 'RecordAttempt',
    data: {
      attempt,
      response_status: outcome.status,
      error: outcome.error,
      duration_ms: outcome.duration_ms,
      succeeded,
      attempted_at: at.toISOString(),
      next_attempt_at: retryIn === null ? null : new Date(at.getTime() + retryIn).toISOString()
    }
  }, { actor: 'webhooks', correlation_id: r.job_uuid })
  if (recorded.events.length === 0) return { kind: 'over' } // another worker recorded this attempt
  // 410 Gone: the receiver says the endpoint is no more; disabled at once (issue "Bulk verification").
  if (outcome.status === 410 && !r.test) {
    await handle(ctx, webhooksStream(r.user_uuid), webhook, { type: 'DisableGone', data: { webhook_uuid: r.webhook_uuid, now: at.toISOString() } }, { actor: 'webhooks', correlation_id: r.job_uuid })
  }
  if (retryIn !== null) return { kind: 'retry', outcome, attempt, retry_in_ms: retryIn }
  return { kind: succeeded ? 'delivered' : 'failed', outcome, attempt }
}

/**
 * Counts the outcome of a delivery's last attempt on its endpoint (interface section 6,
 * rule 2): a failure adds one consecutive failure and may disable the endpoint; a success
 * after failures clears the count. Test deliveries and attempts with more to come count
 * nothing. Idempotent per delivery.
 */
export async function recordDeliveryOutcome (ctx: CommandContext, last: WebhookDeliveryAttempted['data'], policy: DeliveryPolicy): Promise<void> {
  if (last.test || last.next_attempt_at !== null) return
  await handle(ctx, webhooksStream(last.user_uuid), webhook, {
    type: 'RecordDeliveryOutcome',
    data: { webhook_uuid: last.webhook_uuid, delivery_uuid: last.delivery_uuid, succeeded: last.succeeded, disable_after: policy.disable_after_failures, now: ctx.now().toISOString() }
  }, { actor: 'webhooks', correlation_id: last.job_uuid })
}

/**
 * POST /api/webhooks/{uuid}/test: sends one signed sample `job.completed` delivery (a new
 * sample job uuid, status `completed`) at once, records it like a real attempt, and
 * reports the outcome. It is not retried and does not count towards automatic disabling.
 * @throws DomainError not_found `test_webhook.not_found`.
 */
export async function testWebhook (ctx: CommandContext, owner: string, uuid: string, send: WebhookSender, policy: DeliveryPolicy): Promise<{ delivery_uuid: string, delivered: boolean, response_status: number | null, error: string | null, duration_ms: number, position: number }> {
  const { state } = await load(ctx, webhooksStream(owner), webhook)
  if (!state.endpoints.has(uuid)) throw new DomainError('not_found', 'test_webhook.not_found', 'no such webhook endpoint')
  const id = ctx.newId()
  await requestDelivery(ctx, { delivery_uuid: id, webhook_uuid: uuid, user_uuid: owner, event: 'job.completed', job_uuid: ctx.newId(), status: 'completed', timestamp: Math.floor(ctx.now().getTime() / 1000), test: true })
  const result = await attemptDelivery(ctx, id, 1, send, policy)
  const outcome = 'outcome' in result ? result.outcome : { status: null, error: 'not attempted', duration_ms: 0 }
  return { delivery_uuid: id, delivered: result.kind === 'delivered', response_status: outcome.status, error: outcome.error, duration_ms: outcome.duration_ms, position: await ctx.store.headPosition() }
}
