import { DomainError } from '../../domain/shared.ts'
import type { CommandContext } from '../../commands/context.ts'
import { startSession, type ClientSeen, type SignedIn } from '../../commands/session/start-session.ts'
import { verifyChallengeToken } from '../../lib/crypto/jwt.ts'
import { checkSecondFactor } from '../../commands/user/shared/second-factor.ts'
import { users } from '../../commands/user/aggregate.ts'

/**
 * POST /api/auth/2fa/verify: completes a sign-in with the challenge token and a TOTP or
 * backup code.
 * @throws DomainError unauthorized `verify_2fa.invalid_token`, `verify_2fa.invalid_code`;
 *   locked `verify_2fa.locked`.
 */
export async function completeTwoFactor(
  ctx: CommandContext,
  tempToken: string,
  code: string,
  client: ClientSeen | null = null,
  sessionTtlS?: number
): Promise<SignedIn> {
  const challenge = await verifyChallengeToken(ctx.secrets, ctx.config.jwt_issuer, tempToken)
  const owner = challenge?.user_uuid
  if (!challenge || !owner) throw new DomainError('unauthorized', 'verify_2fa.invalid_token', 'the sign-in challenge is invalid or expired; sign in again')
  const { state } = await users.load(ctx, owner)
  if (state.status !== 'confirmed' || state.banned || state.two_factor.status !== 'active')
    throw new DomainError('unauthorized', 'verify_2fa.invalid_token', 'the sign-in challenge is invalid or expired; sign in again')
  // Single use: the accepted code spends the challenge (a second completion with it is refused).
  await checkSecondFactor(ctx, owner, code, 'verify_2fa', 'unauthorized', challenge.challenge_id)
  return await startSession(ctx, owner, 'password', { client, refresh_ttl_s: sessionTtlS })
}
