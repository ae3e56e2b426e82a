import { v5 as uuidv5 } from 'uuid'
import type { WebhookEventKind, WebhookDeliveryRequested } from '../../domain/webhook/events.ts'
import type { CommandContext } from '../context.ts'
import { webhookDeliveries } from './aggregate.ts'

/** Namespace of delivery ids derived from (endpoint, event, job): one delivery per triple. */
const DELIVERY_NAMESPACE = '5b0f3c1e-8d7a-4c52-9a43-1f6e2d9b7c10'

/** The delivery id of `event` for `job_uuid` to endpoint `webhook_uuid` (UUIDv5, so requesting twice is one delivery). */
export function deliveryUuid(webhookUuid: string, event: WebhookEventKind, jobUuid: string): string {
  return uuidv5(`${webhookUuid}:${event}:${jobUuid}`, DELIVERY_NAMESPACE)
}

/**
 * Requests one delivery to an endpoint (stream `webhook_delivery-<uuid>`); idempotent.
 * @returns the delivery id and the position of its request (or of the stream's head).
 */
export async function requestDelivery(
  ctx: CommandContext,
  data: Omit<WebhookDeliveryRequested['data'], 'requested_at'>
): Promise<{ delivery_uuid: string; position: number }> {
  const r = await webhookDeliveries.handle(
    ctx,
    data.delivery_uuid,
    { type: 'RequestDelivery', data: { ...data, requested_at: ctx.now().toISOString() } },
    { actor: 'webhooks', correlation_id: data.job_uuid }
  )
  return { delivery_uuid: data.delivery_uuid, position: r.position }
}
