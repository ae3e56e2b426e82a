import type { CommandContext } from '../context.ts'
import * as claim from '../../domain/claim/decider.ts'
import type * as user from '../../domain/user/decider.ts'
import { DomainError } from '../../domain/shared.ts'
import { load } from '../../eventsourcing/command-handler.ts'
import { emailClaimStream } from './shared/email-claims.ts'
import { users } from './aggregate.ts'

/**
 * What other aggregates' commands and the flows may read of an account (`npm run lint`'s
 * rule "aggregates-read-each-other-only"): its state and the account an address names.
 * Nothing here appends. Cost: one stream's load (from its latest snapshot).
 */

/** An account's state as of now (`user-<uuid>`), with the stream's global position. */
export async function readAccount(ctx: CommandContext, owner: string): Promise<{ state: user.UserState; position: number }> {
  const { state, position } = await users.load(ctx, owner)
  return { state, position }
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
