import { DomainError } from '../../domain/shared.ts'
import * as user from '../../domain/user/decider.ts'
import { hashPassword, verifyPassword } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../../commands/context.ts'
import { assertPasswordPolicy } from '../../commands/user/shared/password-policy.ts'
import { faultPoint } from '../../lib/faults.ts'
import { reactNow } from '../react-now.ts'
import { revokeSessionsFlow } from './flow.ts'
import { startPasswordCheck } from '../../commands/user/start-password-check.ts'
import { contextWords, factorOf } from '../../commands/user/shared/second-factor.ts'
import { users } from '../../commands/user/aggregate.ts'

/**
 * PATCH /api/users/{uuid}/password: checks the current password (and, with two-factor on,
 * `code`: a TOTP or backup code, ASVS 5.0 V7.5.1), sets the new one (PasswordChanged, naming
 * the session kept) and revokes every other session of the account (flow
 * `revoke-sessions`, run here and from the committed event). Fault points:
 * `sessions.after_change`, `sessions.after_revoke`.
 * @throws DomainError invalid `change_password.invalid_password`, `change_password.wrong_password`,
 *   `change_password.second_factor_required`, `change_password.invalid_code`; locked `change_password.locked`.
 */
export async function changePassword(
  ctx: CommandContext,
  owner: string,
  currentSession: string | null,
  input: { current_password: string; new_password: string; code?: string }
): Promise<void> {
  const { state } = await users.load(ctx, owner)
  if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'change_password.not_found', 'no such user')
  assertPasswordPolicy('change_password', input.new_password, await contextWords(ctx, state))
  await startPasswordCheck(ctx, owner, 'change_password')
  const [passwordOk, passwordHash, factor] = await Promise.all([
    verifyPassword(state.password_hash, input.current_password),
    hashPassword(input.new_password),
    factorOf(ctx, state, input.code)
  ])
  const r = await users.handle(
    ctx,
    owner,
    {
      type: 'ChangePassword',
      data: {
        password_ok: passwordOk,
        for_password_hash: state.password_hash,
        password_hash: passwordHash,
        factor,
        kept_session_uuid: currentSession,
        now: ctx.now().toISOString()
      }
    },
    { actor: owner }
  )
  if (user.refusedSecondFactor(r.events)) throw new DomainError('invalid', 'change_password.invalid_code', 'the code is wrong or was already used')
  // The flow's first fact is PasswordChanged (it names the session kept); the revocations follow from it.
  faultPoint(ctx.config.fault_point, 'sessions.after_change')
  await reactNow(ctx, revokeSessionsFlow, r)
}
