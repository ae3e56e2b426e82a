import { DomainError } from '../../domain/shared.ts'
import * as user from '../../domain/user/decider.ts'
import * as claim from '../../domain/claim/decider.ts'
import { sha256Hex } from '../../lib/crypto/hashing.ts'
import { parseOwnedToken } from '../../commands/owned-token.ts'
import type { CommandContext } from '../../commands/context.ts'
import { handle } from '../../eventsourcing/command-handler.ts'
import { emailClaimStream } from '../../commands/user/shared/email-claims.ts'
import { users } from '../../commands/user/aggregate.ts'
import { faultPoint } from '../../lib/faults.ts'
import { reactNow } from '../react-now.ts'
import { emailChangeFlow } from './flow.ts'

/**
 * POST /api/auth/verify-email-change: claims the new address for the account (its claim
 * stream, decided with its expected revision), switches the account to it (EmailChanged:
 * the user decider checks the link again) and releases the old one (flow `email-change`,
 * from EmailChanged). A link opened again after an interruption before the change
 * finishes it (the claim is idempotent); after the change, the flow worker releases the
 * old address. Fault points: `email.after_change`, `email.after_release`.
 * @throws DomainError unauthorized `verify_email_change.invalid_token`; conflict
 *   `verify_email_change.email_taken` when the address was taken meanwhile.
 * @returns a global position at or after the change and the release.
 */
export async function verifyEmailChange(ctx: CommandContext, token: string): Promise<number> {
  const invalid = (): DomainError => new DomainError('unauthorized', 'verify_email_change.invalid_token', 'the link is invalid or expired')
  const parsed = parseOwnedToken(token)
  if (!parsed) throw invalid()
  const { owner, secret } = parsed
  const { state } = await users.load(ctx, owner)
  const now = ctx.now().toISOString()
  if (state.status === 'none' || state.status === 'deleted' || !state.email_change) throw invalid()
  const [newEmail, oldEmail] = await Promise.all([ctx.sealer.unseal(owner, state.email_change.new_email), ctx.sealer.unseal(owner, state.email)])
  if (newEmail === null || oldEmail === null) throw invalid()
  // The link is checked by the decider below; checking it first keeps a wrong link from claiming anything.
  if (!user.sameHash(state.email_change.hash, sha256Hex(secret)) || now >= state.email_change.expires_at) throw invalid()
  const claimed = await handle(ctx, emailClaimStream(ctx, newEmail), claim, { type: 'ClaimValue', data: { owner_uuid: owner, now } }, { actor: owner })
  if (claimed.state.owner_uuid !== owner)
    throw new DomainError('conflict', 'verify_email_change.email_taken', 'this address was taken by another account meanwhile')
  const changed = await users.handle(ctx, owner, { type: 'VerifyEmailChange', data: { token_hash: sha256Hex(secret), now } }, { actor: owner })
  faultPoint(ctx.config.fault_point, 'email.after_change')
  // The previous address is released from EmailChanged (flow `email-change`): here, and by the flow worker should this process die first.
  await reactNow(ctx, emailChangeFlow, changed)
  return await ctx.store.headPosition()
}
