import type { WebhookDeliveryRequested } from '../../domain/webhook/events.ts'
import type { SendOutcome, WebhookSender } from '../../ports/webhook-sender.ts'
import { SIGNATURE_HEADER, signatureHeader } from '../../lib/webhook-signature.ts'
import type { CommandContext } from '../context.ts'
import { type DeliveryPolicy, nextAttemptIn } from './shared/delivery-policy.ts'
import { webhookDeliveries } from './aggregate.ts'
import { readWebhooks } from '../webhook/read.ts'

/** The JSON body of a delivery (docs/interface.md §6): no raw email. A `batch.completed` names its batch. */
function deliveryBody(r: WebhookDeliveryRequested['data']): string {
  if (r.event === 'batch.completed') return JSON.stringify({ event: r.event, batch_uuid: r.job_uuid, status: r.status, timestamp: r.timestamp })
  return JSON.stringify({ event: r.event, job_uuid: r.job_uuid, status: r.status, timestamp: r.timestamp })
}

export type AttemptResult =
  | { kind: 'delivered' | 'failed'; outcome: SendOutcome; attempt: number }
  | { kind: 'retry'; outcome: SendOutcome; attempt: number; retry_in_ms: number }
  | { kind: 'not_due'; retry_in_ms: number }
  | { kind: 'over' }

/**
 * Makes attempt `attempt` of a pending delivery, if that is its next one and it is due:
 * loads the delivery and its endpoint from the event store, signs the body with the
 * endpoint's secret (fresh `t` per attempt), POSTs it and records the attempt
 * (WebhookDeliveryAttempted; a 2xx is success; `next_attempt_at` set while attempts are
 * left). A disabled or deleted endpoint abandons the delivery (test deliveries go to
 * disabled endpoints too). A stale request (that attempt already made, or another one
 * next) does nothing: `over`. The outcome of the last attempt is counted by
 * `recordDeliveryOutcome` (a 410 disables the endpoint there), driven by the recorded
 * event, so a crash after the attempt loses neither.
 */
export async function attemptDelivery(
  ctx: CommandContext,
  deliveryId: string,
  attempt: number,
  send: WebhookSender,
  policy: DeliveryPolicy
): Promise<AttemptResult> {
  const { state } = await webhookDeliveries.load(ctx, deliveryId)
  if (state.status !== 'pending' || state.attempts + 1 !== attempt) return { kind: 'over' }
  const now = ctx.now()
  if (state.next_attempt_at !== null && Date.parse(state.next_attempt_at) > now.getTime())
    return { kind: 'not_due', retry_in_ms: Date.parse(state.next_attempt_at) - now.getTime() }
  const r = state.request
  const endpoint = (await readWebhooks(ctx, r.user_uuid)).endpoints.get(r.webhook_uuid)
  const secret = endpoint ? await ctx.sealer.unseal(r.user_uuid, endpoint.secret) : null
  if (!endpoint || secret === null || (endpoint.status === 'disabled' && !r.test)) {
    await webhookDeliveries.handle(
      ctx,
      deliveryId,
      { type: 'AbandonDelivery', data: { reason: endpoint?.status === 'disabled' ? 'endpoint_disabled' : 'endpoint_deleted', now: now.toISOString() } },
      { actor: 'webhooks' }
    )
    return { kind: 'over' }
  }
  const body = deliveryBody(r)
  // Sealed since the URL is the account's data (one written before that is read as is).
  const url = endpoint.url.startsWith('sealed:') ? await ctx.sealer.unseal(r.user_uuid, endpoint.url) : endpoint.url
  if (url === null) {
    await webhookDeliveries.handle(
      ctx,
      deliveryId,
      { type: 'AbandonDelivery', data: { reason: 'endpoint_deleted', now: now.toISOString() } },
      { actor: 'webhooks' }
    )
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
  const recorded = await webhookDeliveries.handle(
    ctx,
    deliveryId,
    {
      type: 'AttemptDelivery',
      data: {
        attempt,
        response_status: outcome.status,
        error: outcome.error,
        duration_ms: outcome.duration_ms,
        succeeded,
        attempted_at: at.toISOString(),
        next_attempt_at: retryIn === null ? null : new Date(at.getTime() + retryIn).toISOString()
      }
    },
    { actor: 'webhooks', correlation_id: r.job_uuid }
  )
  if (recorded.events.length === 0) return { kind: 'over' } // another worker recorded this attempt
  if (retryIn !== null) return { kind: 'retry', outcome, attempt, retry_in_ms: retryIn }
  return { kind: succeeded ? 'delivered' : 'failed', outcome, attempt }
}
