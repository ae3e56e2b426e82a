import * as batch from '../../domain/batch/decider.ts'
import type { CommandContext } from '../context.ts'
import { handle } from '../command-handler.ts'
import { metaOf } from './settle-batch-chunk.ts'

/** Defers greylisted items of one chunk until `retry_at` (BatchItemsDeferred: back through the bus when due), `attempt` counting from 1. */
export async function deferBatchItems(
  ctx: CommandContext,
  batchUuid: string,
  chunkUuid: string,
  items: Array<{ i: number; email: string }>,
  retry: { attempt: number; retry_at: string; deadline_at: string },
  causation: string
): Promise<void> {
  await handle(
    ctx,
    `batch-${batchUuid}`,
    batch,
    { type: 'DeferItems', data: { chunk_uuid: chunkUuid, items, ...retry, now: ctx.now().toISOString() } },
    metaOf(batchUuid, causation)
  )
}
