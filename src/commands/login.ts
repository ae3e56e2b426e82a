import { DomainError } from '../domain/shared.ts'
import * as user from '../domain/user/decider.ts'
import { verifyPassword } from '../infra/crypto/hashing.ts'
import { handle, load, type CommandContext } from './context.ts'
import { accountOfEmail } from './email-index.ts'
import { startSession, type SignedIn } from './start-session.ts'

const invalid = (): DomainError => new DomainError('unauthorized', 'login.invalid_credentials', 'wrong email or password')

/**
 * POST /api/auth/login. An absent account costs one argon2 verification against a dummy
 * hash, like a present one, so timing does not tell them apart. Wrong passwords are
 * recorded on the account (LoginFailed); LOGIN_FAILURES_BEFORE_LOCK of them in a row lock
 * sign-in for LOGIN_LOCK_MS — a temporary lock that also holds for the right password.
 * @throws DomainError unauthorized `login.invalid_credentials` (wrong credentials, banned or
 *   deleted account); forbidden `login.unconfirmed` (right password, address not
 *   confirmed); locked `login.locked`.
 */
export async function login (ctx: CommandContext, input: { email: string, password: string }): Promise<SignedIn> {
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
  return await startSession(ctx, state.user_uuid, 'password')
}
