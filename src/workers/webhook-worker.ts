import type { RecordedEvent } from '../ports/event-store.ts'
import { RetryLater, type Bus, type Consumer } from '../ports/bus.ts'
import type { CommandContext } from '../commands/context.ts'
import { attemptDelivery, type AttemptResult } from '../commands/webhook-delivery/attempt-delivery.ts'
import { deliveryUuid, requestDelivery } from '../commands/webhook-delivery/request-delivery.ts'
import { recordDeliveryOutcome } from '../commands/webhook/record-delivery-outcome.ts'
import type { DeliveryPolicy } from '../commands/webhook-delivery/shared/delivery-policy.ts'
import type { JobCompleted, JobFailed } from '../domain/job/events.ts'
import type { BatchCompleted } from '../domain/batch/events.ts'
import type { WebhookDeliveryAttempted, WebhookDeliveryRequested, WebhookEventKind } from '../domain/webhook/events.ts'
import type { WebhookSender } from '../ports/webhook-sender.ts'
import type { Metrics } from '../ports/metrics.ts'
import { webhooks } from '../commands/webhook/aggregate.ts'
import { jobs } from '../commands/job/aggregate.ts'
import { batches } from '../commands/batch/aggregate.ts'
import { environmentOfEndpoint } from '../domain/webhook/decider.ts'
import type { Environment } from '../domain/shared.ts'

/** Event types the webhook service consumes for first attempts (its NATS stream and durable consumer). */
export const WEBHOOK_WORKER_EVENTS = ['JobCompleted', 'JobFailed', 'BatchCompleted', 'WebhookDeliveryRequested'] as const
/**
 * Event types of the webhook service's retry consumer: each recorded attempt either
 * schedules the next one (held until due) or ends the delivery (its outcome is counted).
 * Kept apart so that waiting retries never hold up first attempts.
 */
export const WEBHOOK_RETRY_EVENTS = ['WebhookDeliveryAttempted'] as const
/** Retries a webhook worker may hold while they wait (NATS `max_ack_pending` of the retry consumer). */
export const MAX_WAITING_RETRIES = 100_000

export interface WebhookWorkerOptions {
  policy: DeliveryPolicy
  concurrency: number
  log?: (msg: string, err?: unknown) => void
  /** Counts delivery attempts by outcome. */
  metrics?: Metrics
}

/**
 * The webhook worker (docs/interface.md §6; docs/design/architecture.md fan-out):
 * - JobCompleted / JobFailed → one WebhookDeliveryRequested per active endpoint of the
 *   account and of the job's environment subscribed to `job.completed`, read from the
 *   account's `webhooks-<user>` stream (delivery ids derive from endpoint and job, so a
 *   redelivered event requests nothing twice); BatchCompleted likewise for
 *   `batch.completed`. A sandbox job is told to the sandbox's endpoints only, a live one
 *   to the live ones (issue 42 item 10);
 * - WebhookDeliveryRequested → the first attempt: sign, POST, record;
 * - WebhookDeliveryAttempted (a second, retry consumer) → with attempts left, the next
 *   one once due (held with `RetryLater`: NATS `nak` with delay); after the last one, its
 *   outcome counted on the endpoint (consecutive failures, automatic disabling).
 * Acknowledges a message only once its work is recorded in the event store.
 */
export async function startWebhookWorker(ctx: CommandContext, bus: Bus, send: WebhookSender, options: WebhookWorkerOptions): Promise<Consumer> {
  /** Makes an attempt and counts its outcome. */
  const attempt = async (deliveryId: string, n: number): Promise<AttemptResult> => {
    const r = await attemptDelivery(ctx, deliveryId, n, send, options.policy)
    if (r.kind === 'delivered' || r.kind === 'failed' || r.kind === 'retry') options.metrics?.webhookAttempts.inc({ outcome: r.kind })
    return r
  }

  /**
   * One delivery request per active endpoint of the account in `environment` subscribed to
   * `kind`, read from `webhooks-<user>` (the write side now, never a read model that may
   * lag); delivery ids derive from endpoint, kind and subject, so a redelivered event
   * requests nothing twice.
   */
  const notify = async (user: string, environment: Environment, kind: WebhookEventKind, subject: string, status: string, at: string): Promise<void> => {
    const { state } = await webhooks.load(ctx, user)
    const told = [...state.endpoints.values()].filter(w => w.status === 'active' && w.events.includes(kind) && environmentOfEndpoint(w) === environment)
    for (const endpoint of told) {
      await requestDelivery(ctx, {
        delivery_uuid: deliveryUuid(endpoint.webhook_uuid, kind, subject),
        webhook_uuid: endpoint.webhook_uuid,
        user_uuid: user,
        event: kind,
        job_uuid: subject,
        status,
        timestamp: Math.floor(Date.parse(at) / 1000),
        test: false
      })
    }
  }

  /**
   * The environment of a job that ended, as its event carries it; for an event written
   * before events carried it, the job's own stream says (a few events).
   */
  const jobEnvironment = async (d: JobCompleted['data'] | JobFailed['data']): Promise<Environment> => {
    if (d.environment !== undefined) return d.environment
    const { state } = await jobs.load(ctx, d.job_uuid)
    return state.status === 'none' ? 'live' : state.environment
  }

  /** The environment of a batch that completed, as its event carries it, or from the batch's own stream for an older event. */
  const batchEnvironment = async (d: BatchCompleted['data']): Promise<Environment> => {
    if (d.environment !== undefined) return d.environment
    const { state } = await batches.load(ctx, d.batch_uuid)
    return state.status === 'none' ? 'live' : state.environment
  }

  const onJobEnded = async (event: RecordedEvent): Promise<void> => {
    const d = event.data as JobCompleted['data'] | JobFailed['data']
    await notify(
      d.user_uuid,
      await jobEnvironment(d),
      'job.completed',
      d.job_uuid,
      event.type === 'JobCompleted' ? 'completed' : 'failed',
      'completed_at' in d ? d.completed_at : d.failed_at
    )
  }

  const onBatchCompleted = async (event: RecordedEvent): Promise<void> => {
    const d = event.data as BatchCompleted['data']
    await notify(d.user_uuid, await batchEnvironment(d), 'batch.completed', d.batch_uuid, 'completed', d.completed_at)
  }

  const consumer = await bus.consume(
    { name: 'webhooks', event_types: WEBHOOK_WORKER_EVENTS, concurrency: options.concurrency, max_deliveries: 8 },
    async event => {
      if (event.type === 'WebhookDeliveryRequested') {
        const d = event.data as WebhookDeliveryRequested['data']
        if (!d.test) await attempt(d.delivery_uuid, 1) // tests are sent by the API at once
        return
      }
      if (event.type === 'BatchCompleted') await onBatchCompleted(event)
      else await onJobEnded(event)
    }
  )

  const retries = await bus.consume(
    { name: 'webhook_retries', event_types: WEBHOOK_RETRY_EVENTS, concurrency: options.concurrency, max_deliveries: 50, max_pending: MAX_WAITING_RETRIES },
    async event => {
      const d = event.data as WebhookDeliveryAttempted['data']
      if (d.test) return
      if (d.next_attempt_at === null) {
        await recordDeliveryOutcome(ctx, d, options.policy.disable_after_failures)
        return
      }
      const wait = Date.parse(d.next_attempt_at) - Date.now()
      if (wait > 0) throw new RetryLater(wait)
      // Due by this clock, not yet by the command's (a redelivery a little early): held again, not dropped.
      const r = await attempt(d.delivery_uuid, d.attempt + 1)
      if (r.kind === 'not_due') throw new RetryLater(r.retry_in_ms)
    }
  )

  return {
    get problem() {
      return consumer.problem ?? retries.problem ?? null
    },
    stop: async () => {
      await consumer.stop()
      await retries.stop()
    }
  }
}
