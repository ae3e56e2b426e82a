import { DomainError } from '../../domain/shared.ts'
import * as claim from '../../domain/claim/decider.ts'
import { verifyPassword } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../../commands/context.ts'
import { handle } from '../../commands/command-handler.ts'
import { emailClaimStream } from '../../commands/user/email-claims.ts'
import { revokeAllSessions } from '../../commands/session/revoke-all-sessions.ts'
import { startPasswordCheck } from '../../commands/user/start-password-check.ts'
import { agents } from '../../commands/agent/aggregate.ts'
import { apiKeys } from '../../commands/apikey/aggregate.ts'
import { users } from '../../commands/user/aggregate.ts'
import { webhooks } from '../../commands/webhook/aggregate.ts'

/**
 * DELETE /api/users/{uuid} with the password: appends UserDeleted, signs out every
 * session, revokes every API key and agent, deletes its webhook endpoints, releases the address (it can register again) and destroys the account's data
 * key, so every address and code sealed in its events is unreadable from then on
 * (crypto-shredding, ARCHITECTURE.md); projections purge its read models.
 * @throws DomainError invalid `delete_user.wrong_password`, `delete_user.already_deleted`;
 *   not_found `delete_user.not_found`.
 */
export async function deleteAccount(ctx: CommandContext, owner: string, password: string): Promise<number> {
  const { state } = await users.load(ctx, owner)
  if (state.status === 'none') throw new DomainError('not_found', 'delete_user.not_found', 'no such user')
  if (state.status === 'deleted') {
    // Finishes an erasure that an earlier call could not complete (both steps are idempotent).
    await releaseAndShred(ctx, owner, await ctx.sealer.unseal(owner, state.email), ctx.now().toISOString())
    throw new DomainError('invalid', 'delete_user.already_deleted', 'the account is already deleted')
  }
  await startPasswordCheck(ctx, owner, 'delete_user')
  const passwordOk = await verifyPassword(state.password_hash, password)
  const email = await ctx.sealer.unseal(owner, state.email)
  const now = ctx.now().toISOString()
  const r = await users.handle(
    ctx,
    owner,
    { type: 'DeleteUser', data: { password_ok: passwordOk, for_password_hash: state.password_hash, now } },
    { actor: owner }
  )
  try {
    // From here the account is deleted: its credentials already stop working (the auth
    // check needs an active account); these events record it per credential.
    await revokeAllSessions(ctx, owner, null)
    await apiKeys.handle(ctx, owner, { type: 'RevokeAllApiKeys', data: { reason: 'account_deleted', now } }, { actor: owner })
    await agents.handle(ctx, owner, { type: 'RevokeAllAgents', data: { reason: 'account_deleted', now } }, { actor: owner })
    await webhooks.handle(ctx, owner, { type: 'DeleteAllWebhooks', data: { now } }, { actor: owner })
  } finally {
    await releaseAndShred(ctx, owner, email, now)
  }
  return r.position
}

/** Releases the address (only if this account still holds it) and destroys the data key. */
async function releaseAndShred(ctx: CommandContext, owner: string, email: string | null, now: string): Promise<void> {
  if (email !== null) await handle(ctx, emailClaimStream(ctx, email), claim, { type: 'ReleaseValue', data: { owner_uuid: owner, now } }, { actor: owner })
  await ctx.sealer.destroyKey(owner)
}
