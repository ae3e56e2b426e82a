import * as job from '../../domain/job/decider.ts'
import type { CommandContext } from '../context.ts'
import { handle } from '../command-handler.ts'
import type { LoadedJob } from './seal-result.ts'
import { metaOf } from './settle-job.ts'
import { settleJob } from './settle-job.ts'

/** Marks a job failed (it could not be verified at all) and releases its reservation. @returns whether this call failed it. */
export async function failJob(ctx: CommandContext, loaded: LoadedJob, error: string, causationId: string): Promise<boolean> {
  if (loaded.state.status === 'none') return false
  const jobUuid = loaded.state.job_uuid
  const r = await handle(
    ctx,
    `job-${jobUuid}`,
    job,
    { type: 'FailJob', data: { job_uuid: jobUuid, error, failed_at: ctx.now().toISOString() } },
    metaOf(jobUuid, causationId),
    { known: loaded }
  )
  await settleJob(ctx, r.state, causationId)
  return r.events.length > 0
}
