import type * as batch from '../../domain/batch/decider.ts'
import type { BatchEvent } from '../../domain/batch/events.ts'
import type { CommandContext } from '../context.ts'
import { workerMeta, type HandleResult } from '../../eventsourcing/command-handler.ts'
import { batches } from './aggregate.ts'

/**
 * Decides a batch worker's `command` on the batch's stream (`batch-<uuid>`), correlated by
 * the batch and caused by the bus message `causation`. Cost: one append on a stream whose
 * state is bounded by the plan's `max_batch_size`. @throws DomainError from the batch decider.
 */
export async function decideOnBatch(
  ctx: CommandContext,
  batchUuid: string,
  command: batch.BatchCommand,
  causation: string
): Promise<HandleResult<batch.BatchState, BatchEvent>> {
  return await batches.handle(ctx, batchUuid, command, workerMeta(batchUuid, causation))
}
