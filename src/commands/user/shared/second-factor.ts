import { verify as verifyTotp } from 'otplib'
import { DomainError, type ErrorKind } from '../../../domain/shared.ts'
import * as user from '../../../domain/user/decider.ts'
import { hmacHex } from '../../../lib/crypto/hashing.ts'
import type { CommandContext } from '../../context.ts'
import { addressWords } from './password-policy.ts'
import { users } from '../aggregate.ts'

/**
 * Accepted clock drift for TOTP codes, seconds: none. A code lives only in its own 30 s
 * step (ASVS 5.0 V6.5.5: a TOTP lives at most 30 s), stricter than RFC 6238 §5.2's
 * allowance of a step of network delay; a code typed at the end of its step is refused and
 * the next one works.
 */
const TOTP_TOLERANCE_S = 0

type Account = user.Account

export async function account(ctx: CommandContext, owner: string): Promise<Account> {
  const { state } = await users.load(ctx, owner)
  if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'user.not_found', 'no such user')
  return state
}

/**
 * A code checked against the account's current TOTP secret (the facts the user decider
 * needs): the time step it matches (its own step only), or null; and its HMAC as a
 * backup code. Only six digits can be a TOTP code.
 */
export async function secondFactorFacts(ctx: CommandContext, state: Account, code: string): Promise<user.SecondFactor> {
  const trimmed = code.trim()
  const tf = state.two_factor
  let step: number | null = null
  if (/^\d{6}$/.test(trimmed) && tf.secret) {
    const secret = await ctx.sealer.unseal(state.user_uuid, tf.secret)
    if (secret !== null) {
      const r = await verifyTotp({ secret, token: trimmed, epochTolerance: TOTP_TOLERANCE_S, epoch: Math.floor(ctx.now().getTime() / 1000) } as Parameters<
        typeof verifyTotp
      >[0])
      step = r.valid ? (r as unknown as { timeStep: number }).timeStep : null
    }
  }
  return { for_secret: tf.secret, time_step: step, backup_code_hash: backupHash(ctx, state.user_uuid, trimmed) }
}

/**
 * The second factor a credential change presents (`code`), checked against the account's
 * secret: null without a code or without two-factor on (the user decider then refuses a
 * change that needs one, `withSecondFactor`).
 */
export async function factorOf(ctx: CommandContext, state: Account, code: string | undefined): Promise<user.SecondFactor | null> {
  return code === undefined || state.two_factor.status !== 'active' ? null : await secondFactorFacts(ctx, state, code)
}

/**
 * The words no new password of the account may contain: its address's parts (unsealed
 * here; none once the data key is destroyed).
 */
export async function contextWords(ctx: CommandContext, state: Account): Promise<string[]> {
  const email = await ctx.sealer.unseal(state.user_uuid, state.email)
  return email === null ? [] : addressWords(email)
}

/**
 * Checks a second factor (sign-in, disabling): a TOTP code of a time step after the last
 * accepted one (never the same code twice), or an unused backup code (spent by this). A
 * wrong code is recorded; TWO_FACTOR_FAILURES_BEFORE_LOCK of them lock the step for a while.
 * @throws DomainError `<operation>.invalid_code` of kind `wrongKind`; locked `<operation>.locked`.
 */
export async function checkSecondFactor(
  ctx: CommandContext,
  owner: string,
  code: string,
  operation: string,
  wrongKind: ErrorKind,
  challengeId?: string
): Promise<void> {
  const state = await account(ctx, owner)
  const facts = await secondFactorFacts(ctx, state, code)
  const r = await users.handle(
    ctx,
    owner,
    { type: 'CheckSecondFactor', data: { ...facts, ...(challengeId !== undefined && { challenge_id: challengeId }), operation, now: ctx.now().toISOString() } },
    { actor: owner }
  )
  if (user.refusedSecondFactor(r.events)) throw new DomainError(wrongKind, `${operation}.invalid_code`, 'the code is wrong or was already used')
}

export const backupHash = (ctx: CommandContext, owner: string, code: string): string =>
  hmacHex(ctx.secrets.code_key, `backup:${owner}:${code.replace(/[\s-]/g, '').toLowerCase()}`)
