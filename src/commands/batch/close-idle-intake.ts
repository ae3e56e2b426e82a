import type { CommandContext } from '../context.ts'
import { batches } from './aggregate.ts'

/**
 * Closes intake of batches idle since `idle_before` (`BATCH_INTAKE_IDLE_S` without a chunk),
 * for the batch worker's sweep. A chunk that arrives meanwhile keeps intake open (the
 * decider compares with the batch's latest chunk).
 * @returns whether intake was closed.
 */
export async function closeIdleIntake(ctx: CommandContext, batchUuid: string, idleBefore: string): Promise<boolean> {
  const r = await batches.handle(
    ctx,
    batchUuid,
    { type: 'CloseIdleIntake', data: { reason: 'idle', idle_before: idleBefore, now: ctx.now().toISOString() } },
    { actor: 'batch-intake' }
  )
  return r.events.length > 0
}
