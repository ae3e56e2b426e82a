import type { CommandContext } from '../../commands/context.ts'
import { decideOnJob } from '../../commands/job/decide-on-job.ts'
import type { LoadedJob } from '../../commands/job/seal-result.ts'
import { settleJob } from './settle-job.ts'

/** Marks a job failed (it could not be verified at all) and releases its reservation. @returns whether this call failed it. */
export async function failJob(ctx: CommandContext, loaded: LoadedJob, error: string, causationId: string): Promise<boolean> {
  if (loaded.state.status === 'none') return false
  const jobUuid = loaded.state.job_uuid
  const r = await decideOnJob(ctx, loaded, jobUuid, { type: 'FailJob', data: { job_uuid: jobUuid, error, failed_at: ctx.now().toISOString() } }, causationId)
  await settleJob(ctx, r.state, causationId)
  return r.events.length > 0
}
