import { DomainError, type Environment } from '../../domain/shared.ts'
import { sees as endpointSeen } from '../../domain/webhook/decider.ts'
import type { WebhookSender } from '../../ports/webhook-sender.ts'
import type { CommandContext } from '../context.ts'
import type { DeliveryPolicy } from './shared/delivery-policy.ts'
import { requestDelivery } from './request-delivery.ts'
import { attemptDelivery } from './attempt-delivery.ts'
import { readWebhooks } from '../webhook/read.ts'

/**
 * POST /api/webhooks/{uuid}/test: sends one signed sample `job.completed` delivery (a new
 * sample job uuid, status `completed`) at once, records it like a real attempt, and
 * reports the outcome. It is not retried and does not count towards automatic disabling.
 * `sees`: the environment the caller sees (null for a session: both).
 * @throws DomainError not_found `test_webhook.not_found` (unknown, another account's or another environment's).
 */
export async function testWebhook(
  ctx: CommandContext,
  owner: string,
  sees: Environment | null,
  uuid: string,
  send: WebhookSender,
  policy: DeliveryPolicy
): Promise<{ delivery_uuid: string; delivered: boolean; response_status: number | null; error: string | null; duration_ms: number; position: number }> {
  const state = await readWebhooks(ctx, owner)
  const endpoint = state.endpoints.get(uuid)
  if (!endpoint || !endpointSeen(endpoint, sees)) throw new DomainError('not_found', 'test_webhook.not_found', 'no such webhook endpoint')
  const id = ctx.newId()
  await requestDelivery(ctx, {
    delivery_uuid: id,
    webhook_uuid: uuid,
    user_uuid: owner,
    event: 'job.completed',
    job_uuid: ctx.newId(),
    status: 'completed',
    timestamp: Math.floor(ctx.now().getTime() / 1000),
    test: true
  })
  const result = await attemptDelivery(ctx, id, 1, send, policy)
  const outcome = 'outcome' in result ? result.outcome : { status: null, error: 'not attempted', duration_ms: 0 }
  return {
    delivery_uuid: id,
    delivered: result.kind === 'delivered',
    response_status: outcome.status,
    error: outcome.error,
    duration_ms: outcome.duration_ms,
    position: await ctx.store.headPosition()
  }
}
