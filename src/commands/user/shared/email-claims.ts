import { hmacHex } from '../../../lib/crypto/hashing.ts'
import type { CommandContext } from '../../context.ts'
import { DomainError } from '../../../domain/shared.ts'
import { parseAddress } from '../../../verifier/syntax.ts'

/**
 * Stream of the one-account-per-email claim: `user_email-<hmac(lower-cased address)>`.
 * Addresses are compared case-insensitively for accounts (the blind index hides them).
 */
export function emailClaimStream(ctx: CommandContext, email: string): string {
  return `user_email-${hmacHex(ctx.secrets.index_key, email.trim().toLowerCase())}`
}

/**
 * The address an account operation was given, normalised (RFC 5321/6531 syntax, the
 * engine's parser), or the operation's `<operation>.invalid_email`.
 * @throws DomainError invalid `<operation>.invalid_email`.
 */
export function assertEmail(operation: string, email: string): string {
  const parsed = parseAddress(email)
  if (!parsed.ok) throw new DomainError('invalid', `${operation}.invalid_email`, `invalid email: ${parsed.detail}`)
  return parsed.normalized
}
