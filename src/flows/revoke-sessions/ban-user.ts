import type { CommandContext } from '../../commands/context.ts'
import { requireAccount } from '../../commands/user/read.ts'
import { reactNow } from '../react-now.ts'
import { revokeSessionsFlow } from './flow.ts'
import { users } from '../../commands/user/aggregate.ts'

/**
 * `svc accounts ban`: bans the account holding `email` (UserBanned) and revokes every session
 * it has (flow `revoke-sessions`, run here and from the committed event),
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
  const revoked = await reactNow(ctx, revokeSessionsFlow, r)
  return { user_uuid: owner, banned: r.events.length > 0 ? true : 'already', sessions_revoked: revoked > 0 }
}
