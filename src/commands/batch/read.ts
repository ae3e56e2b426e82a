import type { BatchState } from '../../domain/batch/decider.ts'
import type { CommandContext } from '../context.ts'
import { batches } from './aggregate.ts'

/**
 * What other aggregates' commands may read of a list verification (nothing here appends):
 * its state as of now. Cost: the batch's stream from its latest snapshot (bounded by the
 * plan's batch size).
 */
export async function readBatch(ctx: CommandContext, batchUuid: string): Promise<BatchState> {
  return (await batches.load(ctx, batchUuid)).state
}
