import { DomainError } from '../domain/shared.ts'
import * as wallet from '../domain/wallet/decider.ts'
import * as job from '../domain/job/decider.ts'
import { CHECK_NAMES, costOf, isCheckName, resolveChecks, type CheckName } from '../domain/checks.ts'
import { handle, type CommandContext } from './context.ts'

/** Who submits: the account, the environment of the credential and its key, if any. */
export interface Submitter {
  user_uuid: string
  environment: 'live' | 'test'
  key_uuid: string | null
  /** The agent that submits, when an agent token authenticated the request. */
  agent_uuid?: string | null
  /** Checks the key may run (all for session tokens). */
  enabled_checks: readonly string[]
}

export interface SubmittedJob { job_uuid: string, cost: number, checks: CheckName[], position: number }

/** Longest address text accepted into a job (characters); longer input is a 400. */
export const MAX_EMAIL_INPUT = 1024

/**
 * POST /api/verify (interface "Verification jobs"; ARCHITECTURE.md "Money"): resolves the
 * checks, reserves their cost on `wallet-<user>` with the wallet's expected revision
 * (live keys and sessions only; test keys never touch the wallet), then queues the job
 * with the address sealed. Any address text is accepted: bad syntax completes `invalid`.
 * @throws DomainError invalid `submit_job.invalid_checks`; forbidden
 *   `submit_job.check_not_enabled`; payment_required `submit_job.insufficient_tokens`.
 */
export async function submitJob (ctx: CommandContext, by: Submitter, input: { email: string, checks?: string[] }): Promise<SubmittedJob> {
  if (input.checks && !input.checks.every(isCheckName)) {
    throw new DomainError('invalid', 'submit_job.invalid_checks', `checks must be among: ${CHECK_NAMES.join(', ')}`)
  }
  const checks = resolveChecks(input.checks as CheckName[] | undefined)
  const disabled = checks.filter(c => !by.enabled_checks.includes(c))
  if (disabled.length > 0) throw new DomainError('forbidden', 'submit_job.check_not_enabled', `this key does not enable: ${disabled.join(', ')}`)
  const cost = by.environment === 'test' ? 0 : costOf(checks)
  const jobUuid = ctx.newId()
  const now = ctx.now().toISOString()
  const actor = by.key_uuid ?? by.agent_uuid ?? by.user_uuid
  if (cost > 0) {
    await handle(ctx, `wallet-${by.user_uuid}`, wallet, { type: 'ReserveTokens', data: { user_uuid: by.user_uuid, job_uuid: jobUuid, amount: cost, now } }, { actor, correlation_id: jobUuid })
  }
  const email = await ctx.sealer.seal(by.user_uuid, input.email)
  const r = await handle(ctx, `job-${jobUuid}`, job, {
    type: 'QueueJob',
    data: { job_uuid: jobUuid, user_uuid: by.user_uuid, email, checks, cost, environment: by.environment, key_uuid: by.key_uuid, queued_at: now }
  }, { actor, correlation_id: jobUuid })
  return { job_uuid: jobUuid, cost, checks, position: r.position }
}
