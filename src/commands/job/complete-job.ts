import * as job from '../../domain/job/decider.ts'
import { costOf, isCheckName } from '../../domain/checks.ts'
import type { VerificationResult } from '../../verifier/result.ts'
import { faultPoint } from '../../lib/faults.ts'
import type { CommandContext } from '../context.ts'
import { handle } from '../command-handler.ts'
import { type LoadedJob, sealResult } from './seal-result.ts'
import { metaOf, settleJob } from './settle-job.ts'

/**
 * Tokens a result costs: the checks that ran and were requested; nothing for an `unknown`
 * that a check could not answer (VERIFICATION.md policy). `smtp_not_requested` is an
 * answer to every check asked for (SMTP was not among them): those are charged.
 */
export function chargeFor(result: VerificationResult, requested: readonly string[]): number {
  if ((result.verdict === 'unknown' && result.reason !== 'smtp_not_requested') || result.sandbox) return 0
  const ran = result.checks
    .filter(c => c.outcome !== 'skipped')
    .map(c => c.name)
    .filter(isCheckName)
    .filter(c => requested.includes(c))
  return costOf([...new Set(ran)])
}

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
  const r = await handle(
    ctx,
    `job-${state.job_uuid}`,
    job,
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
    metaOf(state.job_uuid, causationId),
    { known: loaded }
  )
  faultPoint(ctx.config.fault_point, 'settle.after_complete')
  await settleJob(ctx, r.state, causationId)
  return r.events.length > 0
}
