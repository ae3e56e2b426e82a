import * as wallet from '../domain/wallet/decider.ts'
import * as job from '../domain/job/decider.ts'
import { costOf, isCheckName } from '../domain/checks.ts'
import type { VerificationResult } from '../verifier/result.ts'
import { faultPoint } from '../lib/faults.ts'
import { type CommandContext } from './context.ts'
import { handle, type Loaded } from './command-handler.ts'

/** A job stream as loaded by the worker that runs it. */
export type LoadedJob = Loaded<job.JobState>

/**
 * Tokens a result costs: the checks that ran and were requested; nothing for an `unknown`
 * that a check could not answer (VERIFICATION.md policy). `smtp_not_requested` is an
 * answer to every check asked for (SMTP was not among them): those are charged.
 */
export function chargeFor (result: VerificationResult, requested: readonly string[]): number {
  if ((result.verdict === 'unknown' && result.reason !== 'smtp_not_requested') || result.sandbox) return 0
  const ran = result.checks.filter(c => c.outcome !== 'skipped').map(c => c.name).filter(isCheckName).filter(c => requested.includes(c))
  return costOf([...new Set(ran)])
}

const metaOf = (jobUuid: string, causationId: string): { causation_id: string, correlation_id: string, actor: string } => ({ causation_id: causationId, correlation_id: jobUuid, actor: 'verifier' })

/**
 * The engine's result as it is kept in `JobCompleted`: everything derived from the
 * address sealed with the owner's data key (the address, the suggested correction, the
 * MX host, the SMTP reply text and each check's detail), so destroying the key erases it
 * (crypto-shredding, ARCHITECTURE.md); verdict, reason, score, flags and check names and
 * outcomes stay readable for statistics. The submitted `email` is not kept (the job has it).
 */
export async function sealResult (ctx: CommandContext, owner: string, result: VerificationResult): Promise<Record<string, unknown>> {
  const seal = async (text: string | null): Promise<string | null> => text === null || text === '' ? text : await ctx.sealer.seal(owner, text)
  const { email: _email, normalized, did_you_mean: suggestion, mx, smtp, checks, ...rest } = result
  return {
    ...rest,
    normalized: await seal(normalized),
    did_you_mean: await seal(suggestion),
    mx: mx === null ? null : { ...mx, host: await seal(mx.host) },
    smtp: smtp === null ? null : { ...smtp, message: await seal(smtp.message) },
    checks: await Promise.all(checks.map(async c => ({ ...c, detail: typeof c.detail === 'string' ? await seal(c.detail) : c.detail })))
  }
}

/**
 * Records the engine's result on `job-<uuid>` (JobCompleted; the address fields are
 * sealed with the owner's data key) and settles the reservation. The job stream is read
 * once: `loaded` is what the worker read before verifying (re-read only if the stream
 * changed meanwhile). Idempotent: a job seen again is not completed twice and its
 * reservation is not settled twice. Fault points: `settle.after_complete`, `settle.after_capture`.
 * @returns whether this call completed the job (false: it was terminal already).
 */
export async function completeJob (ctx: CommandContext, loaded: LoadedJob, result: VerificationResult, causationId: string): Promise<boolean> {
  const state = loaded.state
  if (state.status === 'none') return false
  const sealed = await sealResult(ctx, state.user_uuid, result)
  const r = await handle(ctx, `job-${state.job_uuid}`, job, {
    type: 'CompleteJob',
    data: { job_uuid: state.job_uuid, verdict: result.verdict, reason: result.reason, score: result.score, charge: chargeFor(result, state.checks), result: sealed, completed_at: ctx.now().toISOString() }
  }, metaOf(state.job_uuid, causationId), { known: loaded })
  faultPoint(ctx.config.fault_point, 'settle.after_complete')
  await settleJob(ctx, r.state, causationId)
  return r.events.length > 0
}

/** Marks a job failed (it could not be verified at all) and releases its reservation. @returns whether this call failed it. */
export async function failJob (ctx: CommandContext, loaded: LoadedJob, error: string, causationId: string): Promise<boolean> {
  if (loaded.state.status === 'none') return false
  const jobUuid = loaded.state.job_uuid
  const r = await handle(ctx, `job-${jobUuid}`, job, { type: 'FailJob', data: { job_uuid: jobUuid, error, failed_at: ctx.now().toISOString() } }, metaOf(jobUuid, causationId), { known: loaded })
  await settleJob(ctx, r.state, causationId)
  return r.events.length > 0
}

/**
 * Settles a terminal job's reservation (the one named in its JobQueued) on its wallet:
 * captures the job's `charge` and releases the rest (all of it for `unknown` or failed
 * jobs). A no-op for test-key jobs, free jobs, jobs still running and reservations
 * already settled (the wallet decider sees that one is no longer open).
 */
export async function settleJob (ctx: CommandContext, state: job.JobState, causationId: string): Promise<void> {
  if (state.status === 'none' || !job.isTerminal(state) || state.cost === 0 || state.environment === 'test') return
  const now = ctx.now().toISOString()
  const ids = { user_uuid: state.user_uuid, job_uuid: state.job_uuid, reservation_uuid: state.reservation_uuid, now }
  const meta = metaOf(state.job_uuid, causationId)
  if (state.status === 'completed') {
    await handle(ctx, `wallet-${state.user_uuid}`, wallet, { type: 'CaptureTokens', data: { ...ids, amount: state.charge } }, meta)
  } else {
    await handle(ctx, `wallet-${state.user_uuid}`, wallet, { type: 'ReleaseTokens', data: { ...ids, reason: 'job_failed' } }, meta)
  }
  faultPoint(ctx.config.fault_point, 'settle.after_capture')
}
