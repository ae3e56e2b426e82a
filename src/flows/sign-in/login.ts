import { DomainError } from '../../domain/shared.ts'
import * as user from '../../domain/user/decider.ts'
import { verifyPassword } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../../commands/context.ts'
import { accountOfEmail } from '../../commands/user/read.ts'
import { startSession, type ClientSeen, type SignedIn } from '../../commands/session/start-session.ts'
import { issueChallengeToken } from '../../lib/crypto/jwt.ts'
import { startPasswordCheck } from '../../commands/user/start-password-check.ts'
import { users } from '../../commands/user/aggregate.ts'

const invalid = (): DomainError => new DomainError('unauthorized', 'login.invalid_credentials', 'wrong email or password')

/**
 * POST /api/auth/login. An absent account costs one argon2 verification against a dummy
 * hash, like a present one. Each attempt is counted on the account before its password is
 * judged (`startPasswordCheck`) and cleared by a success; LOGIN_FAILURES_BEFORE_LOCK
 * standing attempts lock sign-in for LOGIN_LOCK_MS — a temporary lock that also holds for
 * the right password, decided in the user decider.
 * With two-factor active, the answer is a challenge (`temp_token`) to complete at
 * `/api/auth/2fa/verify`.
 * @throws DomainError unauthorized `login.invalid_credentials` (wrong credentials, banned or
 *   deleted account); forbidden `login.unconfirmed` (right password, address not
 *   confirmed); locked `login.locked`.
 */
export async function login(
  ctx: CommandContext,
  input: { email: string; password: string },
  client: ClientSeen | null = null,
  sessionTtlS?: number
): Promise<SignedIn | { two_factor_required: true; temp_token: string }> {
  const owner = await accountOfEmail(ctx, input.email)
  const { state } = owner ? await users.load(ctx, owner) : { state: user.initialState() }
  const now = ctx.now().toISOString()
  const known = state.status !== 'none' && state.status !== 'deleted'
  if (!known) {
    // An address without an account locks like one with it: the answers do not tell them apart.
    const guess = `unknown:${input.email.trim().toLowerCase()}`
    const at = ctx.now().getTime()
    if (ctx.unknown_sign_ins.locked(guess, at))
      throw new DomainError('locked', 'login.locked', 'too many wrong passwords: the account is locked for a while; try again later or reset your password')
    ctx.unknown_sign_ins.count(guess, at)
    await verifyPassword(null, input.password)
    throw invalid()
  }
  // Counted before it is judged: of concurrent guesses, at most the lock's threshold are checked.
  await startPasswordCheck(ctx, state.user_uuid, 'login')
  const ok = await verifyPassword(state.password_hash, input.password)
  await users.handle(ctx, state.user_uuid, { type: 'Login', data: { succeeded: ok, now } }, { actor: state.user_uuid })
  if (!ok || state.banned) throw invalid()
  if (state.status === 'unconfirmed') throw new DomainError('forbidden', 'login.unconfirmed', 'confirm your email address first')
  if (state.two_factor.status === 'active') {
    return { two_factor_required: true, temp_token: await issueChallengeToken(ctx.secrets, ctx.config.jwt_issuer, state.user_uuid, CHALLENGE_TTL_S, ctx.now()) }
  }
  return await startSession(ctx, state.user_uuid, 'password', { client, refresh_ttl_s: sessionTtlS })
}

/** Lifetime of the two-factor challenge token, seconds. */
const CHALLENGE_TTL_S = 5 * 60
