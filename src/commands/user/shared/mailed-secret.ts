import type * as user from '../../../domain/user/decider.ts'
import type { CommandContext } from '../../context.ts'
import { users } from '../aggregate.ts'

/** What the sealing gave a mailed secret: its sealed form, when it expires, and the instant it was issued (RFC 3339). */
export interface IssuedSecret {
  sealed: string
  expires_at: string
  now: string
}

/**
 * Issues a secret that the mailer sends to the account `owner` (a reset link, a confirmation
 * code) on the account's stream (`user-<uuid>`): the secret sealed with the account's data
 * key (the mail is composed from it; it is erased with the account), valid `ttlS` seconds,
 * in the command `command` builds from it. Nothing happens when the data key is gone (an
 * erased account): the callers answer alike either way. Cost: one seal and one append.
 * @throws DomainError from the user decider (a cooldown or a daily allowance refused).
 */
export async function issueMailedSecret(
  ctx: CommandContext,
  owner: string,
  secret: string,
  ttlS: number,
  command: (issued: IssuedSecret) => user.UserCommand
): Promise<void> {
  const now = ctx.now()
  const sealed = await ctx.sealer.seal(owner, secret).catch(() => null)
  if (sealed === null) return
  const issued = { sealed, expires_at: new Date(now.getTime() + ttlS * 1000).toISOString(), now: now.toISOString() }
  await users.handle(ctx, owner, command(issued), { actor: owner })
}
