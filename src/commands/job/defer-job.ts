import type { CommandContext } from '../context.ts'
import { decideOnJob } from './decide-on-job.ts'
import type { LoadedJob } from './seal-result.ts'

/**
 * The job waits (JobDeferred, status `deferred`) and is asked again at `retry_at`, until
 * `deadline_at`: greylisting (docs/design/verification.md), or held while the egress self-test finds
 * port 25 blocked (`egress_blocked`). A terminal job is not deferred.
 * @returns whether the job was deferred (false: it was terminal already).
 */
export async function deferJob(
  ctx: CommandContext,
  loaded: LoadedJob,
  data: { retry_at: string; deadline_at: string; reason?: 'greylisted' | 'egress_blocked' },
  causationId: string
): Promise<boolean> {
  if (loaded.state.status === 'none') return false
  const jobUuid = loaded.state.job_uuid
  const deferral = { reason: data.reason ?? 'greylisted', retry_at: data.retry_at, deadline_at: data.deadline_at, deferred_at: ctx.now().toISOString() }
  const r = await decideOnJob(ctx, loaded, jobUuid, { type: 'DeferJob', data: { job_uuid: jobUuid, ...deferral } }, causationId)
  return r.events.length > 0
}
