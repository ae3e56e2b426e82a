import { DomainError } from '../../domain/shared.ts'
import { hashPassword, sha256Hex } from '../../lib/crypto/hashing.ts'
import { parseOwnedToken } from '../../commands/owned-token.ts'
import type { CommandContext } from '../../commands/context.ts'
import { assertPasswordPolicy } from '../../commands/user/shared/password-policy.ts'
import { faultPoint } from '../../lib/faults.ts'
import { reactNow } from '../react-now.ts'
import { revokeSessionsFlow } from './flow.ts'
import { contextWords } from '../../commands/user/shared/second-factor.ts'
import { users } from '../../commands/user/aggregate.ts'

/**
 * POST /api/auth/reset-password: sets a new password with a reset token, spends the token
 * and signs out every session of the account (flow `revoke-sessions`, from PasswordChanged).
 * Fault points: `sessions.after_reset`, `sessions.after_revoke`.
 * @throws DomainError invalid `reset_password.invalid_password`; unauthorized
 *   `reset_password.invalid_token`; not_found `reset_password.no_account`.
 */
export async function resetPassword(ctx: CommandContext, token: string, newPassword: string): Promise<void> {
  assertPasswordPolicy('reset_password', newPassword)
  const parsed = parseOwnedToken(token)
  if (!parsed) throw new DomainError('unauthorized', 'reset_password.invalid_token', 'the reset link is invalid, expired or already used')
  const { owner, secret } = parsed
  const { state } = await users.load(ctx, owner)
  if (state.status === 'none') throw new DomainError('not_found', 'reset_password.no_account', 'no account matches this reset link')
  assertPasswordPolicy('reset_password', newPassword, await contextWords(ctx, state))
  const passwordHash = await hashPassword(newPassword)
  const r = await users.handle(
    ctx,
    owner,
    { type: 'ResetPassword', data: { token_hash: sha256Hex(secret), password_hash: passwordHash, now: ctx.now().toISOString() } },
    { actor: owner }
  )
  faultPoint(ctx.config.fault_point, 'sessions.after_reset')
  await reactNow(ctx, revokeSessionsFlow, r)
}
