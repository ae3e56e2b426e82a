import type { BatchItemResult } from '../../domain/batch/events.ts'
import type { CommandContext } from '../context.ts'
import { decideOnBatch } from './decide-on-batch.ts'

/**
 * Records the engine's results of items of one chunk (`batch-<uuid>`, RecordBatchResults):
 * items with a result already are skipped by the decider, so a redelivered part records
 * nothing twice; the chunk's last result settles it (BatchChunkProcessed) and the batch's
 * last one completes it (BatchCompleted). Cost: one append on a stream whose state is bounded
 * by the plan's `max_batch_size`.
 */
export async function recordBatchResults(
  ctx: CommandContext,
  batchUuid: string,
  chunkUuid: string,
  results: BatchItemResult[],
  causation: string
): Promise<void> {
  await decideOnBatch(ctx, batchUuid, { type: 'RecordBatchResults', data: { chunk_uuid: chunkUuid, results, now: ctx.now().toISOString() } }, causation)
}
