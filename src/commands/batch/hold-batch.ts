import type { CommandContext } from '../context.ts'
import { decideOnBatch } from './decide-on-batch.ts'

/**
 * Records that a batch's live items are held while this service cannot reach mail servers
 * (BatchHeld, reason `egress_blocked`), once per hold: a batch already held or ended gets no
 * new event; its next results end the hold. `until` (ISO 8601): the latest its parts wait.
 * Cost: one append on the batch's stream (its state bounded by the plan's `max_batch_size`).
 * @throws DomainError `batch.not_found` from the batch decider for an unknown batch.
 */
export async function holdBatch(ctx: CommandContext, batchUuid: string, until: string, causation: string): Promise<boolean> {
  const r = await decideOnBatch(ctx, batchUuid, { type: 'HoldBatch', data: { reason: 'egress_blocked', until, now: ctx.now().toISOString() } }, causation)
  return r.events.length > 0
}
