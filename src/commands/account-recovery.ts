import { DomainError } from '../domain/shared.ts'
import * as user from '../domain/user/decider.ts'
import { hashPassword, sha256Hex, sixDigitCode, verifyPassword } from '../lib/crypto/hashing.ts'
import { newOwnedToken, parseOwnedToken } from './owned-token.ts'
import { parseAddress } from '../verifier/syntax.ts'
import { type CommandContext } from './context.ts'
import { handle, load } from './command-handler.ts'
import { accountOfEmail } from './email-index.ts'
import { assertPasswordPolicy, confirmationCodeHash, CONFIRMATION_CODE_TTL_S } from './register-user.ts'
import { revokeAllSessions } from './refresh-session.ts'
import { startPasswordCheck } from './password-check.ts'
import { contextWords, factorOf } from './two-factor.ts'

/** Lifetime of a password reset link, seconds. */
export const RESET_TOKEN_TTL_S = 30 * 60

function assertEmail (operation: string, email: string): string {
  const parsed = parseAddress(email)
  if (!parsed.ok) throw new DomainError('invalid', `${operation}.invalid_email`, `invalid email: ${parsed.detail}`)
  return parsed.normalized
}

/**
 * POST /api/auth/resend-confirmation: a new code is issued (and mailed) only when the
 * address is registered, unconfirmed, past the resend cooldown and under the daily
 * allowance; in every other case nothing happens and the caller sees the same 204.
 * @throws DomainError invalid `resend_confirmation.invalid_email` for a malformed address.
 */
export async function resendConfirmation (ctx: CommandContext, email: string): Promise<void> {
  const normalized = assertEmail('resend_confirmation', email)
  const owner = await accountOfEmail(ctx, normalized)
  const code = sixDigitCode()
  if (!owner) return
  const now = ctx.now()
  const sealed = await ctx.sealer.seal(owner, code).catch(() => null)
  if (sealed === null) return
  await handle(ctx, `user-${owner}`, user, {
    type: 'IssueConfirmationCode',
    data: { code_hash: confirmationCodeHash(ctx, owner, code), code_sealed: sealed, expires_at: new Date(now.getTime() + CONFIRMATION_CODE_TTL_S * 1000).toISOString(), now: now.toISOString() }
  }, { actor: owner })
}

/**
 * POST /api/auth/forgot-password: for a confirmed account, past the cooldown, a reset
 * link is mailed (`token=<user uuid>.<secret>`; only the SHA-256 of the secret is stored,
 * single use, expiring). The same 204 either way; the token is drawn and hashed either
 * way too, so both paths do the same work.
 * @throws DomainError invalid `forgot_password.invalid_email`.
 */
export async function forgotPassword (ctx: CommandContext, email: string): Promise<void> {
  const normalized = assertEmail('forgot_password', email)
  const owner = await accountOfEmail(ctx, normalized)
  const { token, secret } = newOwnedToken(owner ?? '00000000-0000-0000-0000-000000000000')
  const tokenHash = sha256Hex(secret)
  if (!owner) return
  const now = ctx.now()
  const sealed = await ctx.sealer.seal(owner, token).catch(() => null)
  if (sealed === null) return
  await handle(ctx, `user-${owner}`, user, {
    type: 'RequestPasswordReset',
    data: { token_hash: tokenHash, token_sealed: sealed, expires_at: new Date(now.getTime() + RESET_TOKEN_TTL_S * 1000).toISOString(), now: now.toISOString() }
  }, { actor: owner })
}

/**
 * POST /api/auth/reset-password: sets a new password with a reset token, spends the token
 * and signs out every session of the account.
 * @throws DomainError invalid `reset_password.invalid_password`; unauthorized
 *   `reset_password.invalid_token`; not_found `reset_password.no_account`.
 */
export async function resetPassword (ctx: CommandContext, token: string, newPassword: string): Promise<void> {
  assertPasswordPolicy('reset_password', newPassword)
  const parsed = parseOwnedToken(token)
  if (!parsed) throw new DomainError('unauthorized', 'reset_password.invalid_token', 'the reset link is invalid, expired or already used')
  const { owner, secret } = parsed
  const { state } = await load(ctx, `user-${owner}`, user)
  if (state.status === 'none') throw new DomainError('not_found', 'reset_password.no_account', 'no account matches this reset link')
  assertPasswordPolicy('reset_password', newPassword, await contextWords(ctx, state))
  const passwordHash = await hashPassword(newPassword)
  await handle(ctx, `user-${owner}`, user, { type: 'ResetPassword', data: { token_hash: sha256Hex(secret), password_hash: passwordHash, now: ctx.now().toISOString() } }, { actor: owner })
  await revokeAllSessions(ctx, owner, null)
}

/**
 * PATCH /api/users/{uuid}/password: checks the current password (and, with two-factor on,
 * `code`: a TOTP or backup code, ASVS 5.0 V7.5.1), sets the new one and revokes every
 * other session of the account.
 * @throws DomainError invalid `change_password.invalid_password`, `change_password.wrong_password`,
 *   `change_password.second_factor_required`, `change_password.invalid_code`; locked `change_password.locked`.
 */
export async function changePassword (ctx: CommandContext, owner: string, currentSession: string | null, input: { current_password: string, new_password: string, code?: string }): Promise<void> {
  const { state } = await load(ctx, `user-${owner}`, user)
  if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'change_password.not_found', 'no such user')
  assertPasswordPolicy('change_password', input.new_password, await contextWords(ctx, state))
  await startPasswordCheck(ctx, owner, 'change_password')
  const [passwordOk, passwordHash, factor] = await Promise.all([verifyPassword(state.password_hash, input.current_password), hashPassword(input.new_password), factorOf(ctx, state, input.code)])
  const r = await handle(ctx, `user-${owner}`, user, { type: 'ChangePassword', data: { password_ok: passwordOk, for_password_hash: state.password_hash, password_hash: passwordHash, factor, now: ctx.now().toISOString() } }, { actor: owner })
  if (user.refusedSecondFactor(r.events)) throw new DomainError('invalid', 'change_password.invalid_code', 'the code is wrong or was already used')
  await revokeAllSessions(ctx, owner, currentSession)
}
