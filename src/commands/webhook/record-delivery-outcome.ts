import type { WebhookDeliveryAttempted } from '../../domain/webhook/events.ts'
import type { CommandContext } from '../context.ts'
import { webhooks } from './aggregate.ts'

/**
 * Counts the outcome of a delivery's last attempt on its endpoint (docs/interface.md §6,
 * rule 2): a failure adds one consecutive failure and may disable the endpoint; a success
 * after failures clears the count. Test deliveries and attempts with more to come count
 * nothing. Idempotent per delivery.
 */
export async function recordDeliveryOutcome(ctx: CommandContext, last: WebhookDeliveryAttempted['data'], disableAfter: number): Promise<void> {
  if (last.test || last.next_attempt_at !== null) return
  // 410 Gone: the receiver says the endpoint is no more; disabled at once.
  if (last.response_status === 410)
    await webhooks.handle(
      ctx,
      last.user_uuid,
      { type: 'DisableGone', data: { webhook_uuid: last.webhook_uuid, now: ctx.now().toISOString() } },
      { actor: 'webhooks', correlation_id: last.job_uuid }
    )
  await webhooks.handle(
    ctx,
    last.user_uuid,
    {
      type: 'RecordDeliveryOutcome',
      data: {
        webhook_uuid: last.webhook_uuid,
        delivery_uuid: last.delivery_uuid,
        succeeded: last.succeeded,
        disable_after: disableAfter,
        now: ctx.now().toISOString()
      }
    },
    { actor: 'webhooks', correlation_id: last.job_uuid }
  )
}
