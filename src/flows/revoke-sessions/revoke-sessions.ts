import type { CommandContext } from '../../commands/context.ts'
import type { HandleResult } from '../../commands/command-handler.ts'
import { runReaction } from '../../eventsourcing/flow.ts'
import { faultPoint } from '../../lib/faults.ts'
import { revokeSessionsFlow } from './flow.ts'

/**
 * Runs `revokeSessionsFlow` at once for the trigger a user command appended (PasswordChanged
 * or UserBanned in `r`), so the operation's answer shows the sessions ended; the flow worker
 * runs it again from the committed event, so a crash in between ends them all the same.
 * Fault point: `sessions.after_revoke` after each revocation.
 * @returns how many sessions it revoked (0 when `r` carries no trigger).
 */
export async function revokeSessionsAfter(ctx: CommandContext, r: Pick<HandleResult<unknown, unknown>, 'recorded' | 'position'>): Promise<number> {
  const trigger = r.recorded.find(e => revokeSessionsFlow.triggers.includes(e.type))
  if (trigger?.id === undefined) return 0
  return await runReaction(ctx, revokeSessionsFlow, { ...trigger, id: trigger.id, position: r.position }, label => {
    faultPoint(ctx.config.fault_point, `sessions.after_${label}`)
  })
}
