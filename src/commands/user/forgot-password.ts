import { sha256Hex } from '../../lib/crypto/hashing.ts'
import { newOwnedToken } from '../owned-token.ts'
import type { CommandContext } from '../context.ts'
import { issueMailedSecret } from './shared/mailed-secret.ts'
import { accountOfEmail } from './read.ts'
import { assertEmail } from './shared/email-claims.ts'

/** Lifetime of a password reset link, seconds. */
const RESET_TOKEN_TTL_S = 30 * 60

/**
 * POST /api/auth/forgot-password: for a confirmed account, past the cooldown, a reset
 * link is mailed (`token=<user uuid>.<secret>`; only the SHA-256 of the secret is stored,
 * single use, expiring). The same 204 either way; the token is drawn and hashed either
 * way too, so both paths do the same work.
 * @throws DomainError invalid `forgot_password.invalid_email`.
 */
export async function forgotPassword(ctx: CommandContext, email: string): Promise<void> {
  const normalized = assertEmail('forgot_password', email)
  const owner = await accountOfEmail(ctx, normalized)
  const { token, secret } = newOwnedToken(owner ?? '00000000-0000-0000-0000-000000000000')
  const tokenHash = sha256Hex(secret)
  if (!owner) return
  await issueMailedSecret(ctx, owner, token, RESET_TOKEN_TTL_S, ({ sealed, expires_at, now }) => ({
    type: 'ForgotPassword',
    data: { token_hash: tokenHash, token_sealed: sealed, expires_at, now }
  }))
}
