import { DomainError } from '../../domain/shared.ts'
import * as user from '../../domain/user/decider.ts'
import { verifyPassword } from '../../lib/crypto/hashing.ts'
import { reactNow } from '../react-now.ts'
import { revokeSessionsFlow } from './flow.ts'
import type { CommandContext } from '../../commands/context.ts'
import { startPasswordCheck } from '../../commands/user/start-password-check.ts'
import { secondFactorFacts } from '../../commands/user/shared/second-factor.ts'
import { users } from '../../commands/user/aggregate.ts'

/**
 * POST /api/users/me/2fa/disable with the password and a code; every other session is
 * signed out (flow `revoke-sessions`, run here and from TwoFactorDisabled; `session`, the
 * caller's, is kept).
 * @throws DomainError invalid `disable_2fa.not_enabled`, `disable_2fa.wrong_password`,
 *   `disable_2fa.invalid_code`; locked `disable_2fa.locked`; not_found `disable_2fa.not_found`.
 * @returns a global position at or after the append and the revocations.
 */
export async function disableTwoFactor(ctx: CommandContext, owner: string, session: string | null, password: string, code: string): Promise<number> {
  const { state } = await users.load(ctx, owner)
  if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'disable_2fa.not_found', 'no such user')
  await startPasswordCheck(ctx, owner, 'disable_2fa')
  const [passwordOk, facts] = await Promise.all([verifyPassword(state.password_hash, password), secondFactorFacts(ctx, state, code)])
  const r = await users.handle(
    ctx,
    owner,
    {
      type: 'DisableTwoFactor',
      data: { password_ok: passwordOk, for_password_hash: state.password_hash, ...facts, kept_session_uuid: session, now: ctx.now().toISOString() }
    },
    { actor: owner }
  )
  if (user.refusedSecondFactor(r.events)) throw new DomainError('invalid', 'disable_2fa.invalid_code', 'the code is wrong or was already used')
  await reactNow(ctx, revokeSessionsFlow, r)
  return await ctx.store.headPosition()
}
