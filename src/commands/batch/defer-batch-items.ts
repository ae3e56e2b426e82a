import type { CommandContext } from '../context.ts'
import { decideOnBatch } from './decide-on-batch.ts'

/** Defers greylisted items of one chunk until `retry_at` (BatchItemsDeferred: back through the bus when due), `attempt` counting from 1. */
export async function deferBatchItems(
  ctx: CommandContext,
  batchUuid: string,
  chunkUuid: string,
  items: Array<{ i: number; email: string }>,
  retry: { attempt: number; retry_at: string; deadline_at: string },
  causation: string
): Promise<void> {
  await decideOnBatch(ctx, batchUuid, { type: 'DeferBatchItems', data: { chunk_uuid: chunkUuid, items, ...retry, now: ctx.now().toISOString() } }, causation)
}
