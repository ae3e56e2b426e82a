import type { RecordedEvent } from '../ports/event-store.ts'
import type { Bus, Consumer } from '../ports/bus.ts'
import type { TokensReserved } from '../domain/wallet/events.ts'
import type { CommandContext } from '../commands/context.ts'
import { queueJob } from '../flows/job-submission/queue-job.ts'
import { faultPoint } from '../lib/faults.ts'
import { RetryLater } from '../ports/bus.ts'
import { abandonChunk } from '../flows/batch-submission/abandon-chunk.ts'

/** How long a chunk's reservation waits for its chunk before the chunk is abandoned (ms): far beyond a request's life. */
export const CHUNK_GRACE_MS = 120_000

/** Event types the intake process manager consumes (its NATS stream and durable consumer). */
export const INTAKE_EVENTS = ['TokensReserved'] as const

/**
 * The intake process manager: a reservation that accepts a job (TokensReserved with
 * `job`, a submission's commit point) is followed by that job's stream. The submission
 * creates it right after its reservation; this makes sure of it when the submitting
 * process died in between, and releases a reservation that finds its job funded by
 * another (`queueJob`). The job's events name the reservation's actor, whichever of the
 * two queues it. Idempotent: redelivery queues nothing twice.
 * A reservation for a batch chunk (`batch_uuid`) whose chunk is not in the batch
 * `grace_ms` after it was made (its submitter died between the two appends) abandons the
 * chunk (the batch refuses it for good) and is released.
 * Fault point: `intake.before_queue`.
 */
export async function startIntakeWorker(ctx: CommandContext, bus: Bus, options: { concurrency: number; grace_ms?: number }): Promise<Consumer> {
  const grace = options.grace_ms ?? CHUNK_GRACE_MS
  return await bus.consume(
    { name: 'intake', event_types: INTAKE_EVENTS, concurrency: options.concurrency, max_deliveries: 20, max_pending: 10_000 },
    async (event: RecordedEvent) => {
      const d = event.data as TokensReserved['data']
      if (d.batch_uuid !== undefined && d.reservation_uuid !== undefined) {
        const r = await abandonChunk(ctx, { ...d, batch_uuid: d.batch_uuid, reservation_uuid: d.reservation_uuid }, grace, event.id)
        if (r.outcome === 'wait') throw new RetryLater(Math.min(r.ms, 30_000))
        return
      }
      if (!d.job || !d.reservation_uuid) return
      faultPoint(ctx.config.fault_point, 'intake.before_queue')
      await queueJob(
        ctx,
        {
          job_uuid: d.job_uuid,
          user_uuid: d.user_uuid,
          email: d.job.email,
          checks: d.job.checks,
          cost: d.amount,
          environment: 'live',
          key_uuid: d.job.key_uuid,
          reservation_uuid: d.reservation_uuid,
          queued_at: d.job.queued_at,
          ...(d.job.email_index !== undefined && { email_index: d.job.email_index })
        },
        { actor: event.metadata.actor ?? 'intake', causation_id: event.id, correlation_id: d.job_uuid }
      )
    }
  )
}
