import type { CommandContext } from '../../commands/context.ts'
import { sessions } from '../../commands/session/aggregate.ts'
import { projected } from '../../eventsourcing/projected.ts'
import { openSessions } from '../../projections/sessions.ts'

/**
 * The account's sessions still active, for a reaction that ends them: listed by the
 * `sessions` read model once it has projected `position` (every session started before
 * the trigger was committed before it), each confirmed on its own stream (the read model
 * may still list one revoked a moment ago). Cost: the account's open sessions.
 */
export async function activeSessions(
  ctx: CommandContext,
  owner: string,
  position: number | undefined
): Promise<Array<{ session_uuid: string; started_at: string }>> {
  if (position !== undefined) await projected(ctx.reads, 'sessions', position - 1)
  const open: Array<{ session_uuid: string; started_at: string }> = []
  for (const s of await openSessions(ctx, owner)) {
    if ((await sessions.load(ctx, s.uuid)).state.status === 'active') open.push({ session_uuid: s.uuid, started_at: s.started_at })
  }
  return open
}
