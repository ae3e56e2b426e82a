import type { CommandContext } from '../../commands/context.ts'
import { requireAccount } from '../../commands/user/read.ts'
import { revokeAllSessions } from '../../commands/session/revoke-all-sessions.ts'
import { users } from '../../commands/user/aggregate.ts'

/**
 * `svc accounts ban`: bans the account holding `email` and revokes every session it has,
 * so that no access or refresh token of it works from then on (the auth check and
 * refresh both refuse a banned account even before the revocations land). Idempotent.
 * @throws DomainError not_found `account.not_found`.
 */
export async function banUser(
  ctx: CommandContext,
  email: string,
  reason: string,
  operator: string
): Promise<{ user_uuid: string; banned: boolean | 'already'; sessions_revoked: boolean }> {
  const owner = await requireAccount(ctx, email)
  const r = await users.handle(ctx, owner, { type: 'BanUser', data: { reason, now: ctx.now().toISOString() } }, { actor: `operator:${operator}` })
  const revoked = await revokeAllSessions(ctx, owner, null)
  return { user_uuid: owner, banned: r.events.length > 0 ? true : 'already', sessions_revoked: revoked > 0 }
}
