import { reactNow } from '../react-now.ts'
import { revokeSessionsFlow } from './flow.ts'
import type { CommandContext } from '../../commands/context.ts'
import { account, secondFactorFacts } from '../../commands/user/shared/second-factor.ts'
import { users } from '../../commands/user/aggregate.ts'

/**
 * POST /api/users/me/2fa/verify-setup: the first TOTP code of the setup's secret makes 2FA
 * active (interface: "TOTP code"). A stolen session that tried it is answered by what goes
 * with it: the account is mailed that two-factor was turned on, and every other session is
 * signed out (flow `revoke-sessions`, run here and from TwoFactorEnabled; `session`, the
 * caller's, is kept). Two requests at once enable it once: the second is decided on the
 * first's result.
 * @throws DomainError conflict `verify_2fa_setup.already_enabled`; invalid
 *   `verify_2fa_setup.no_setup`, `verify_2fa_setup.invalid_code`.
 * @returns a global position at or after the append and the revocations.
 */
export async function verifyTwoFactorSetup(ctx: CommandContext, owner: string, session: string | null, code: string): Promise<number> {
  const state = await account(ctx, owner)
  const facts = await secondFactorFacts(ctx, state, code)
  const r = await users.handle(
    ctx,
    owner,
    { type: 'VerifyTwoFactorSetup', data: { ...facts, kept_session_uuid: session, now: ctx.now().toISOString() } },
    { actor: owner }
  )
  await reactNow(ctx, revokeSessionsFlow, r)
  return await ctx.store.headPosition()
}
