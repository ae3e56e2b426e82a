import { chargeFor } from '../../domain/job/charge.ts'
import type { VerificationResult } from '../../verifier/result.ts'
import { faultPoint } from '../../lib/faults.ts'
import type { CommandContext } from '../../commands/context.ts'
import { decideOnJob } from '../../commands/job/decide-on-job.ts'
import { type LoadedJob, sealResult } from '../../commands/job/seal-result.ts'
import { settleJob } from './settle-job.ts'

/**
 * Records the engine's result on `job-<uuid>` (JobCompleted; the address fields are
 * sealed with the owner's data key) and settles the reservation. The job stream is read
 * once: `loaded` is what the worker read before verifying (re-read only if the stream
 * changed meanwhile). Idempotent: a job seen again is not completed twice and its
 * reservation is not settled twice. Fault points: `settle.after_complete`, `settle.after_capture`.
 * @returns whether this call completed the job (false: it was terminal already).
 */
export async function completeJob(ctx: CommandContext, loaded: LoadedJob, result: VerificationResult, causationId: string): Promise<boolean> {
  const state = loaded.state
  if (state.status === 'none') return false
  const sealed = await sealResult(ctx, state.user_uuid, result)
  const r = await decideOnJob(
    ctx,
    loaded,
    state.job_uuid,
    {
      type: 'CompleteJob',
      data: {
        job_uuid: state.job_uuid,
        verdict: result.verdict,
        reason: result.reason,
        score: result.score,
        charge: chargeFor(result, state.checks),
        result: sealed,
        completed_at: ctx.now().toISOString()
      }
    },
    causationId
  )
  faultPoint(ctx.config.fault_point, 'settle.after_complete')
  await settleJob(ctx, r.state, causationId)
  return r.events.length > 0
}
