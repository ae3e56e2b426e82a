import { hmacHex } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../context.ts'
import * as claim from '../../domain/claim/decider.ts'
import { DomainError } from '../../domain/shared.ts'
import { load } from '../command-handler.ts'
import { users } from './aggregate.ts'

/**
 * Stream of the one-account-per-email claim: `user_email-<hmac(lower-cased address)>`.
 * Addresses are compared case-insensitively for accounts (the blind index hides them).
 */
export function emailClaimStream(ctx: CommandContext, email: string): string {
  return `user_email-${hmacHex(ctx.secrets.index_key, email.trim().toLowerCase())}`
}

/**
 * The account an operator names by its address (every `svc` command that takes
 * `--email`): its uuid. One code for every command: an unknown address, and an account
 * that was deleted, are `account.not_found`.
 * @throws DomainError not_found `account.not_found`.
 */
export async function requireAccount(ctx: CommandContext, email: string): Promise<string> {
  const owner = await accountOfEmail(ctx, email)
  const state = owner === null ? null : (await users.load(ctx, owner)).state
  if (owner === null || state === null || state.status === 'none' || state.status === 'deleted')
    throw new DomainError('not_found', 'account.not_found', `no account with the address ${email}`)
  return owner
}

/** The account uuid that holds `email`, or null. */
export async function accountOfEmail(ctx: CommandContext, email: string): Promise<string | null> {
  const { state } = await load(ctx, emailClaimStream(ctx, email), claim)
  return state.owner_uuid
}
