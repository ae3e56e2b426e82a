import * as wallet from '../domain/wallet/decider.ts'
import * as job from '../domain/job/decider.ts'
import { costOf, isCheckName } from '../domain/checks.ts'
import type { VerificationResult } from '../verifier/result.ts'
import { handle, load, type CommandContext } from './context.ts'

/** Tokens a result costs: the checks that ran and were requested; nothing for `unknown` (VERIFICATION.md policy). */
export function chargeFor (result: VerificationResult, requested: readonly string[]): number {
  if (result.verdict === 'unknown' || result.sandbox) return 0
  const ran = result.checks.filter(c => c.outcome !== 'skipped').map(c => c.name).filter(isCheckName).filter(c => requested.includes(c))
  return costOf([...new Set(ran)])
}

/**
 * Records the engine's result on `job-<uuid>` (JobCompleted; the address fields are
 * sealed with the owner's data key) and settles the reservation. Idempotent: a job seen
 * again is not completed twice and its reservation is not settled twice.
 */
export async function completeJob (ctx: CommandContext, state: Extract<job.JobState, { job_uuid: string }>, result: VerificationResult, causationId: string): Promise<void> {
  const { email: _email, normalized, ...rest } = result
  const sealed = { ...rest, normalized: normalized === null ? null : await ctx.sealer.seal(state.user_uuid, normalized) }
  await handle(ctx, `job-${state.job_uuid}`, job, {
    type: 'CompleteJob',
    data: { job_uuid: state.job_uuid, verdict: result.verdict, reason: result.reason, score: result.score, charge: chargeFor(result, state.checks), result: sealed, completed_at: ctx.now().toISOString() }
  }, { causation_id: causationId, correlation_id: state.job_uuid, actor: 'verifier' })
  await settleJob(ctx, state.job_uuid, causationId)
}

/** Marks a job failed (it could not be verified at all) and releases its reservation. */
export async function failJob (ctx: CommandContext, jobUuid: string, error: string, causationId: string): Promise<void> {
  await handle(ctx, `job-${jobUuid}`, job, { type: 'FailJob', data: { job_uuid: jobUuid, error, failed_at: ctx.now().toISOString() } }, { causation_id: causationId, correlation_id: jobUuid, actor: 'verifier' })
  await settleJob(ctx, jobUuid, causationId)
}

/**
 * Settles a terminal job's reservation on its wallet: captures the job's `charge` and
 * releases the rest (all of it for `unknown` or failed jobs). A no-op for test-key jobs,
 * free jobs, jobs still running and reservations already settled.
 */
export async function settleJob (ctx: CommandContext, jobUuid: string, causationId: string): Promise<void> {
  const { state } = await load(ctx, `job-${jobUuid}`, job)
  if (state.status === 'none' || !job.isTerminal(state) || state.cost === 0 || state.environment === 'test') return
  const now = ctx.now().toISOString()
  const meta = { causation_id: causationId, correlation_id: jobUuid, actor: 'verifier' }
  if (state.status === 'completed') {
    await handle(ctx, `wallet-${state.user_uuid}`, wallet, { type: 'CaptureTokens', data: { user_uuid: state.user_uuid, job_uuid: jobUuid, amount: state.charge, now } }, meta)
  } else {
    await handle(ctx, `wallet-${state.user_uuid}`, wallet, { type: 'ReleaseTokens', data: { user_uuid: state.user_uuid, job_uuid: jobUuid, reason: 'job_failed', now } }, meta)
  }
}
