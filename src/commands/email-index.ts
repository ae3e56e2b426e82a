import { hmacHex } from '../infra/crypto/hashing.ts'
import type { CommandContext } from './context.ts'
import * as claim from '../domain/claim/decider.ts'
import { load } from './context.ts'

/**
 * Stream of the one-account-per-email claim: `user_email-<hmac(lower-cased address)>`.
 * Addresses are compared case-insensitively for accounts (the blind index hides them).
 */
export function emailClaimStream (ctx: CommandContext, email: string): string {
  return `user_email-${hmacHex(ctx.secrets.index_key, email.trim().toLowerCase())}`
}

/** The account uuid that holds `email`, or null. */
export async function accountOfEmail (ctx: CommandContext, email: string): Promise<string | null> {
  const { state } = await load(ctx, emailClaimStream(ctx, email), claim)
  return state.owner_uuid
}
