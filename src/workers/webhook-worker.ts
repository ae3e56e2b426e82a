import type { RecordedEvent } from '../infra/eventstore/port.ts'
import { RetryLater, type Bus, type Consumer } from '../infra/bus/port.ts'
import type { ReadStore } from '../infra/readstore/port.ts'
import type { CommandContext } from '../commands/context.ts'
import { attemptDelivery, deliveryUuid, requestDelivery, type DeliveryPolicy, type WebhookSend } from '../commands/webhooks.ts'
import type { JobCompleted, JobFailed } from '../domain/job/events.ts'
import type { WebhookDeliveryRequested } from '../domain/webhook/events.ts'
import type { WebhookDeliveryDoc, WebhookDoc } from '../projections/webhooks.ts'

/** Event types the webhook service consumes (its NATS stream and durable consumer). */
export const WEBHOOK_WORKER_EVENTS = ['JobCompleted', 'JobFailed', 'WebhookDeliveryRequested'] as const

export interface WebhookWorkerOptions {
  policy: DeliveryPolicy
  concurrency: number
  /** Resolves once the `webhooks` read model has applied events up to `position` (bounded wait). */
  endpointsAt: (position: number) => Promise<boolean>
  /** Where the endpoints are read (`webhooks`), and, with the in-process bus, pending deliveries to resume. */
  reads: ReadStore
  /** Resume pending deliveries from `webhook_deliveries` at start (in-process bus: its retries live in memory). */
  resume: boolean
  log?: (msg: string, err?: unknown) => void
}

/**
 * The webhook worker (interface section 6; ARCHITECTURE.md fan-out):
 * - JobCompleted / JobFailed → one WebhookDeliveryRequested per active endpoint of the
 *   account subscribed to `job.completed`, as the endpoints stood when the job ended
 *   (delivery ids derive from endpoint and job, so a redelivered event requests nothing twice);
 * - WebhookDeliveryRequested → the attempts: sign, POST, record; a failed attempt comes
 *   back after the back-off (`RetryLater`: NATS `nak` with delay), the last one counts
 *   towards disabling the endpoint.
 * Acknowledges a message only once its work is recorded in the event store.
 */
export async function startWebhookWorker (ctx: CommandContext, bus: Bus, send: WebhookSend, options: WebhookWorkerOptions): Promise<Consumer & { readonly scheduled: number }> {
  const timers = new Map<string, NodeJS.Timeout>()
  let stopped = false

  const onJobEnded = async (event: RecordedEvent): Promise<void> => {
    const d = event.data as (JobCompleted['data'] | JobFailed['data'])
    await options.endpointsAt(event.position)
    const { items } = await options.reads.collection<WebhookDoc>('webhooks').find({ user_uuid: d.user_uuid, status: 'active' })
    const ended = 'completed_at' in d ? d.completed_at : d.failed_at
    for (const endpoint of items.filter(w => w.events.includes('job.completed'))) {
      await requestDelivery(ctx, {
        delivery_uuid: deliveryUuid(endpoint.uuid, 'job.completed', d.job_uuid),
        webhook_uuid: endpoint.uuid,
        user_uuid: d.user_uuid,
        event: 'job.completed',
        job_uuid: d.job_uuid,
        status: event.type === 'JobCompleted' ? 'completed' : 'failed',
        timestamp: Math.floor(Date.parse(ended) / 1000),
        test: false
      })
    }
  }

  const deliver = async (id: string): Promise<void> => {
    const r = await attemptDelivery(ctx, id, send, options.policy)
    if (r.kind === 'retry' || r.kind === 'not_due') throw new RetryLater(r.retry_in_ms)
  }

  const consumer = await bus.consume({ name: 'webhooks', event_types: WEBHOOK_WORKER_EVENTS, concurrency: options.concurrency, max_deliveries: 8 }, async event => {
    if (event.type === 'WebhookDeliveryRequested') {
      const d = event.data as WebhookDeliveryRequested['data']
      if (d.test) return // sent by the API at once
      await deliver(d.delivery_uuid)
      return
    }
    await onJobEnded(event)
  })

  // In-process bus: a retry waits in a timer of this process, so after a restart the
  // pending deliveries are found in the read model and resumed when due.
  const resume = (id: string): void => {
    if (stopped) return
    deliver(id).then(() => { timers.delete(id) }, err => {
      const wait = err instanceof RetryLater ? err.delay_ms : 30_000
      if (!(err instanceof RetryLater)) options.log?.(`webhook delivery ${id} failed; retrying in ${wait} ms`, err)
      timers.set(id, setTimeout(() => { resume(id) }, wait).unref())
    })
  }
  if (options.resume) {
    const { items } = await options.reads.collection<WebhookDeliveryDoc>('webhook_deliveries').find({ status: 'pending', test: false })
    for (const d of items) resume(d.uuid)
  }

  return {
    get scheduled () { return timers.size },
    stop: async () => {
      stopped = true
      for (const t of timers.values()) clearTimeout(t)
      timers.clear()
      await consumer.stop()
    }
  }
}
