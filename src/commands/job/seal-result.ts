import type * as job from '../../domain/job/decider.ts'
import type { VerificationResult } from '../../verifier/result.ts'
import type { CommandContext } from '../context.ts'
import type { Loaded } from '../../eventsourcing/command-handler.ts'

/** A job stream as loaded by the worker that runs it. */
export type LoadedJob = Loaded<job.JobState>

/**
 * The engine's result as it is kept in `JobCompleted`: everything derived from the
 * address sealed with the owner's data key (the address, the suggested correction, the
 * MX host, the SMTP reply text and each check's detail), so destroying the key erases it
 * (crypto-shredding, docs/design/architecture.md); verdict, reason, score, flags and check names and
 * outcomes stay readable for statistics. The submitted `email` is not kept (the job has it).
 */
export async function sealResult(ctx: CommandContext, owner: string, result: VerificationResult): Promise<Record<string, unknown>> {
  const seal = async (text: string | null): Promise<string | null> => (text === null || text === '' ? text : await ctx.sealer.seal(owner, text))
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
