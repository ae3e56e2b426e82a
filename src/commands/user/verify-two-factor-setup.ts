import type { CommandContext } from '../context.ts'
import { account, secondFactorFacts } from './second-factor.ts'
import { users } from './aggregate.ts'

/**
 * POST /api/users/me/2fa/verify-setup: the first TOTP code of the setup's secret makes 2FA
 * active (interface: "TOTP code"). A stolen session that tried it is answered by what goes
 * with it: the account is mailed that two-factor was turned on, and every other session is
 * signed out (the route). Two requests at once enable it once: the second is decided on the
 * first's result.
 * @throws DomainError conflict `verify_2fa_setup.already_enabled`; invalid
 *   `verify_2fa_setup.no_setup`, `verify_2fa_setup.invalid_code`.
 * @returns the global position of the append.
 */
export async function verifyTwoFactorSetup(ctx: CommandContext, owner: string, code: string): Promise<number> {
  const state = await account(ctx, owner)
  const facts = await secondFactorFacts(ctx, state, code)
  const r = await users.handle(ctx, owner, { type: 'EnableTwoFactor', data: { ...facts, now: ctx.now().toISOString() } }, { actor: owner })
  return r.position
}
