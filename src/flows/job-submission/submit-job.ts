import { DomainError } from '../../domain/shared.ts'
import * as idempotencyKey from '../../domain/idempotency/decider.ts'
import { CHECK_NAMES, costOf, isCheckName, resolveChecks, type CheckName } from '../../domain/checks.ts'
import type { EventMetadata } from '../../ports/event-store.ts'
import { sha256Hex } from '../../lib/crypto/hashing.ts'
import { faultPoint } from '../../lib/faults.ts'
import type { CommandContext } from '../../commands/context.ts'
import { handle, load } from '../../eventsourcing/command-handler.ts'
import { idempotencyKeyStream } from '../../commands/job/shared/idempotency.ts'
import { queueJob } from './queue-job.ts'
import { jobAddressIndex } from '../../lib/crypto/address-index.ts'
import { jobs } from '../../commands/job/aggregate.ts'
import { wallets } from '../../commands/wallet/aggregate.ts'

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

export interface SubmittedJob {
  job_uuid: string
  cost: number
  checks: CheckName[]
  position: number
  /** True when the request replayed an earlier one with the same `Idempotency-Key`. */
  replayed: boolean
}

/** Longest address text accepted into a job (characters); longer input is a 400. */
export const MAX_EMAIL_INPUT = 1024

/** How long a replayed submission waits for the first request's job to appear before finishing that submission itself (ms). */
const REPLAY_WAIT_MS = 10_000

/** A submission decided on, ready to be accepted (or accepted again, for a replay). */
interface Acceptance {
  by: Submitter
  job_uuid: string
  /** The address, sealed with the owner's data key. */
  email: string
  /** Its blind index in the account (jobAddressIndex). */
  email_index: string
  checks: CheckName[]
  cost: number
  now: string
}

/**
 * POST /api/verify (interface "Verification jobs"; docs/design/architecture.md "Money"). The address is
 * sealed first, so nothing is claimed or reserved for an address that cannot be stored.
 * With an `Idempotency-Key`, the key is claimed for this job in the submitter's
 * environment (kept `config.commands.idempotency_key_ttl_s`; a test key's claim never
 * holds up a live request); a request that replays a held key gets the key's job back and
 * reserves nothing, one with another body is refused. Then the job is
 * accepted at one commit point: for live keys and sessions, one append to
 * `wallet-<user>` that reserves the cost and records the job (TokensReserved with `job`);
 * the job stream is created from it right after, and by the intake process manager should
 * this process die in between. Test keys never touch the wallet: their job stream is the
 * commit point. Any address text is accepted: bad syntax completes `invalid`.
 * Fault points: `submit.after_seal`, `submit.after_claim`, `submit.after_reserve`, `submit.after_queue`.
 * @throws DomainError invalid `submit_job.invalid_checks`; forbidden
 *   `submit_job.check_not_enabled`; payment_required `submit_job.insufficient_tokens`;
 *   unprocessable `submit_job.idempotency_key_reused`.
 */
export async function submitJob(
  ctx: CommandContext,
  by: Submitter,
  input: { email: string; checks?: string[]; idempotency_key?: string | null }
): Promise<SubmittedJob> {
  if (input.checks && !input.checks.every(isCheckName)) {
    throw new DomainError('invalid', 'submit_job.invalid_checks', `checks must be among: ${CHECK_NAMES.join(', ')}`)
  }
  const checks = resolveChecks(input.checks as CheckName[] | undefined)
  const disabled = checks.filter(c => !by.enabled_checks.includes(c))
  if (disabled.length > 0) throw new DomainError('forbidden', 'submit_job.check_not_enabled', `this key does not enable: ${disabled.join(', ')}`)
  const now = ctx.now()
  const a: Acceptance = {
    by,
    job_uuid: ctx.newId(),
    email: await ctx.sealer.seal(by.user_uuid, input.email),
    email_index: jobAddressIndex(ctx, by.user_uuid, input.email),
    checks,
    cost: by.environment === 'test' ? 0 : costOf(checks),
    now: now.toISOString()
  }
  faultPoint(ctx.config.fault_point, 'submit.after_seal')
  if (!input.idempotency_key) return await accept(ctx, a, false)

  const stream = idempotencyKeyStream(ctx, by.user_uuid, by.environment, 'submit_job', input.idempotency_key)
  const requestHash = sha256Hex(JSON.stringify([by.environment, input.email, checks]))
  for (;;) {
    const claim = await handle(
      ctx,
      stream,
      idempotencyKey,
      {
        type: 'ClaimIdempotencyKey',
        data: {
          user_uuid: by.user_uuid,
          operation: 'submit_job',
          job_uuid: a.job_uuid,
          request_hash: requestHash,
          expires_at: new Date(now.getTime() + ctx.config.commands.idempotency_key_ttl_s * 1000).toISOString(),
          now: a.now
        }
      },
      meta(a)
    )
    if (claim.events.length > 0) break
    // Held by an earlier request: its job, once there; a key it gave back is claimed again.
    const held = claim.state as Extract<idempotencyKey.IdempotencyKeyState, { status: 'claimed' }>
    const replayed = await replay(ctx, { ...a, job_uuid: held.job_uuid }, stream)
    if (replayed) return replayed
  }
  faultPoint(ctx.config.fault_point, 'submit.after_claim')
  try {
    return await accept(ctx, a, false)
  } catch (err) {
    // Refused (no tokens, say): the key is free again for the next attempt.
    if (err instanceof DomainError)
      await handle(
        ctx,
        stream,
        idempotencyKey,
        { type: 'ReleaseIdempotencyKey', data: { user_uuid: by.user_uuid, job_uuid: a.job_uuid, reason: err.code, now: a.now } },
        meta(a)
      )
    throw err
  }
}

const meta = (a: Acceptance): Partial<EventMetadata> => ({ actor: a.by.key_uuid ?? a.by.agent_uuid ?? a.by.user_uuid, correlation_id: a.job_uuid })

/** The one commit point of a submission, then the job stream (see `submitJob`). */
async function accept(ctx: CommandContext, a: Acceptance, replayed: boolean): Promise<SubmittedJob> {
  const user = a.by.user_uuid
  let reservation: string | null = null
  if (a.cost > 0) {
    const r = await wallets.handle(
      ctx,
      user,
      {
        type: 'ReserveTokens',
        data: {
          user_uuid: user,
          job_uuid: a.job_uuid,
          reservation_uuid: ctx.newId(),
          amount: a.cost,
          job: { email: a.email, checks: a.checks, key_uuid: a.by.key_uuid, queued_at: a.now, email_index: a.email_index },
          now: a.now
        }
      },
      meta(a)
    )
    // Ours, or the one an interrupted first attempt of this submission left open.
    reservation = r.state.reserved.get(a.job_uuid)?.reservation_uuid ?? null
    faultPoint(ctx.config.fault_point, 'submit.after_reserve')
  }
  // The job stream is new (unless intake got there first): appended without reading it.
  const q = await queueJob(
    ctx,
    {
      job_uuid: a.job_uuid,
      user_uuid: user,
      email: a.email,
      checks: a.checks,
      cost: a.cost,
      environment: a.by.environment,
      key_uuid: a.by.key_uuid,
      reservation_uuid: reservation,
      queued_at: a.now,
      email_index: a.email_index
    },
    meta(a),
    true
  )
  faultPoint(ctx.config.fault_point, 'submit.after_queue')
  return { job_uuid: a.job_uuid, cost: a.cost, checks: a.checks, position: q.position, replayed }
}

/**
 * A request with a held `Idempotency-Key`: answers the key's job once it exists; null when
 * the first request gave the key back meanwhile (it was refused), so this one claims it
 * anew. When the job has not appeared within REPLAY_WAIT_MS (the first request died
 * before its commit point, or hangs), this request finishes that submission itself: an
 * open reservation the first left is reused, a second one made meanwhile is released by
 * `queueJob`.
 */
async function replay(ctx: CommandContext, a: Acceptance, keyStream: string): Promise<SubmittedJob | null> {
  const deadline = Date.now() + REPLAY_WAIT_MS
  for (let pause = 5; ; pause = Math.min(pause * 2, 200)) {
    const j = await jobs.load(ctx, a.job_uuid)
    if (j.state.status !== 'none') return { job_uuid: a.job_uuid, cost: j.state.cost, checks: j.state.checks, position: j.position, replayed: true }
    const key = await load(ctx, keyStream, idempotencyKey)
    if (!idempotencyKey.isHeld(key.state, a.now) || key.state.job_uuid !== a.job_uuid) return null
    if (Date.now() >= deadline) break
    await new Promise(resolve => setTimeout(resolve, pause))
  }
  return await accept(ctx, a, true)
}
