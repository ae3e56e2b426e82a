import { DomainError } from '../domain/shared.ts'
import * as user from '../domain/user/decider.ts'
import { verifyPassword } from '../infra/crypto/hashing.ts'
import { load, type CommandContext } from './context.ts'
import { accountOfEmail } from './email-index.ts'
import { startSession, type SignedIn } from './start-session.ts'

/**
 * POST /api/auth/login. An absent account costs one argon2 verification against a dummy
 * hash, like a present one, so timing does not tell them apart.
 * @throws DomainError unauthorized `login.invalid_credentials`; forbidden
 *   `login.unconfirmed` when the password is right but the address is not confirmed.
 */
export async function login (ctx: CommandContext, input: { email: string, password: string }): Promise<SignedIn> {
  const owner = await accountOfEmail(ctx, input.email)
  const { state } = owner ? await load(ctx, `user-${owner}`, user) : { state: user.initialState() }
  const ok = await verifyPassword(state.status === 'none' ? null : state.password_hash, input.password)
  if (!ok || state.status === 'none') throw new DomainError('unauthorized', 'login.invalid_credentials', 'wrong email or password')
  if (state.status === 'unconfirmed') throw new DomainError('forbidden', 'login.unconfirmed', 'confirm your email address first')
  return await startSession(ctx, state.user_uuid, 'password')
}
