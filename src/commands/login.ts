import { DomainError } from '../domain/shared.ts'
import * as user from '../domain/user/decider.ts'
import { verifyPassword } from '../infra/crypto/hashing.ts'
import { handle, load, type CommandContext } from './context.ts'
import { accountOfEmail } from './email-index.ts'
import { startSession, type ClientSeen, type SignedIn } from './start-session.ts'
import { issueChallengeToken, verifyChallengeToken } from '../infra/crypto/jwt.ts'
import { checkSecondFactor } from './two-factor.ts'

const invalid = (): DomainError => new DomainError('unauthorized', 'login.invalid_credentials', 'wrong email or password')

/**
 * POST /api/auth/login. An absent account costs one argon2 verification against a dummy
 * hash, like a present one, so timing does not tell them apart. Wrong passwords are
 * recorded on the account (LoginFailed); LOGIN_FAILURES_BEFORE_LOCK of them in a row lock
 * sign-in for LOGIN_LOCK_MS — a temporary lock that also holds for the right password.
 * With two-factor active, the answer is a challenge (`temp_token`) to complete at
 * `/api/auth/2fa/verify`.
 * @throws DomainError unauthorized `login.invalid_credentials` (wrong credentials, banned or
 *   deleted account); forbidden `login.unconfirmed` (right password, address not
 *   confirmed); locked `login.locked`.
 */
export async function login (ctx: CommandContext, input: { email: string, password: string }, client: ClientSeen | null = null): Promise<SignedIn | { two_factor_required: true, temp_token: string }> {
  const owner = await accountOfEmail(ctx, input.email)
  const { state } = owner ? await load(ctx, `user-${owner}`, user) : { state: user.initialState() }
  const now = ctx.now().toISOString()
  const known = state.status !== 'none' && state.status !== 'deleted'
  const ok = await verifyPassword(known ? state.password_hash : null, input.password)
  if (!known) throw invalid()
  if (user.loginLocked(state, now)) throw new DomainError('locked', 'login.locked', 'too many wrong passwords: sign-in is locked for a while; try again later or reset your password')
  await handle(ctx, `user-${state.user_uuid}`, user, { type: 'RecordLogin', data: { succeeded: ok, now } }, { actor: state.user_uuid })
  if (!ok || state.banned) throw invalid()
  if (state.status === 'unconfirmed') throw new DomainError('forbidden', 'login.unconfirmed', 'confirm your email address first')
  if (state.two_factor.status === 'active') {
    return { two_factor_required: true, temp_token: await issueChallengeToken(ctx.secrets, ctx.config.jwt_issuer, state.user_uuid, CHALLENGE_TTL_S, ctx.now()) }
  }
  return await startSession(ctx, state.user_uuid, 'password', client)
}

/** Lifetime of the two-factor challenge token, seconds. */
export const CHALLENGE_TTL_S = 5 * 60

/**
 * POST /api/auth/2fa/verify: completes a sign-in with the challenge token and a TOTP or
 * backup code.
 * @throws DomainError unauthorized `verify_2fa.invalid_token`, `verify_2fa.invalid_code`;
 *   locked `verify_2fa.locked`.
 */
export async function completeTwoFactor (ctx: CommandContext, tempToken: string, code: string, client: ClientSeen | null = null): Promise<SignedIn> {
  const owner = await verifyChallengeToken(ctx.secrets, ctx.config.jwt_issuer, tempToken)
  if (!owner) throw new DomainError('unauthorized', 'verify_2fa.invalid_token', 'the sign-in challenge is invalid or expired; sign in again')
  const { state } = await load(ctx, `user-${owner}`, user)
  if (state.status !== 'confirmed' || state.banned || state.two_factor.status !== 'active') throw new DomainError('unauthorized', 'verify_2fa.invalid_token', 'the sign-in challenge is invalid or expired; sign in again')
  await checkSecondFactor(ctx, owner, code, 'verify_2fa', 'unauthorized')
  return await startSession(ctx, owner, 'password', client)
}
