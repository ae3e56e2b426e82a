import * as job from '../../domain/job/decider.ts'
import type { JobQueued } from '../../domain/job/events.ts'
import type { EventMetadata } from '../../ports/event-store.ts'
import type { CommandContext } from '../../commands/context.ts'
import type { HandleResult } from '../../eventsourcing/command-handler.ts'
import { jobs } from '../../commands/job/aggregate.ts'
import { wallets } from '../../commands/wallet/aggregate.ts'

/**
 * Creates a job's stream (JobQueued; a no-op when it exists) for the reservation that
 * funds it. A reservation that finds its job funded by another one (a second attempt at
 * a submission whose first was settled already) is released at once as
 * `duplicate_reservation`: every reservation funds exactly one job or goes back.
 * Used by submissions (`expectNew`: the stream is appended to as new without reading it
 * first; should it exist, it is read and decided again) and by the intake process manager.
 * @returns the job stream's result (its state names the funding reservation).
 */
export async function queueJob(
  ctx: CommandContext,
  data: JobQueued['data'],
  metadata: Partial<EventMetadata>,
  expectNew = false
): Promise<HandleResult<job.JobState, ReturnType<typeof job.decide>[number]>> {
  const none = { state: job.initialState(), revision: -1, position: 0, since_snapshot: 0 }
  const q = await jobs.handle(ctx, data.job_uuid, { type: 'QueueJob', data }, metadata, expectNew ? { known: none } : {})
  const funding = q.state.status === 'none' ? null : q.state.reservation_uuid
  if (data.reservation_uuid && funding !== data.reservation_uuid) {
    await wallets.handle(
      ctx,
      data.user_uuid,
      {
        type: 'ReleaseTokens',
        data: {
          user_uuid: data.user_uuid,
          job_uuid: data.job_uuid,
          reservation_uuid: data.reservation_uuid,
          reason: 'duplicate_reservation',
          now: ctx.now().toISOString()
        }
      },
      metadata
    )
  }
  return q
}
