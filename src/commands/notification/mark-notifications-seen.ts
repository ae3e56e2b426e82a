import type { CommandContext } from '../context.ts'
import { notifications } from './aggregate.ts'

/**
 * POST /api/notifications/seen: the account has seen its feed up to position `upTo`
 * (the seen cursor only moves forward).
 * @returns the position now in effect and the global position of the append (or of the stream's head).
 */
export async function markNotificationsSeen(ctx: CommandContext, owner: string, upTo: number): Promise<{ seen_up_to: number; position: number }> {
  const r = await notifications.handle(
    ctx,
    owner,
    { type: 'MarkNotificationsSeen', data: { user_uuid: owner, up_to: upTo, now: ctx.now().toISOString() } },
    { actor: owner }
  )
  return { seen_up_to: r.state.seen_up_to, position: r.position }
}
