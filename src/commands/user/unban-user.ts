import type { CommandContext } from '../context.ts'
import { requireAccount } from './read.ts'
import { users } from './aggregate.ts'

/**
 * `svc accounts unban`: lifts a ban (sessions revoked by it stay revoked: sign in again). Idempotent.
 * @throws DomainError not_found `account.not_found`.
 */
export async function unbanUser(ctx: CommandContext, email: string, operator: string): Promise<{ user_uuid: string; unbanned: boolean | 'already' }> {
  const owner = await requireAccount(ctx, email)
  const r = await users.handle(ctx, owner, { type: 'UnbanUser', data: { now: ctx.now().toISOString() } }, { actor: `operator:${operator}` })
  return { user_uuid: owner, unbanned: r.events.length > 0 ? true : 'already' }
}
