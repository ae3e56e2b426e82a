import { sixDigitCode } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../context.ts'
import { issueMailedSecret } from './shared/mailed-secret.ts'
import { accountOfEmail } from './read.ts'
import { confirmationCodeHash, CONFIRMATION_CODE_TTL_S } from './shared/confirmation-code.ts'
import { assertEmail } from './shared/email-claims.ts'

/**
 * POST /api/auth/resend-confirmation: a new code is issued (and mailed) only when the
 * address is registered, unconfirmed, past the resend cooldown and under the daily
 * allowance; in every other case nothing happens and the caller sees the same 204.
 * @throws DomainError invalid `resend_confirmation.invalid_email` for a malformed address.
 */
export async function resendConfirmation(ctx: CommandContext, email: string): Promise<void> {
  const normalized = assertEmail('resend_confirmation', email)
  const owner = await accountOfEmail(ctx, normalized)
  const code = sixDigitCode()
  if (!owner) return
  await issueMailedSecret(ctx, owner, code, CONFIRMATION_CODE_TTL_S, ({ sealed, expires_at, now }) => ({
    type: 'ResendConfirmation',
    data: { code_hash: confirmationCodeHash(ctx, owner, code), code_sealed: sealed, expires_at, now }
  }))
}
