import type { CommandContext } from '../context.ts'
import { batchSources } from './aggregate.ts'

/**
 * Removes a batch's kept file (RemoveBatchSource): at the end of its retention (`expired`, by
 * the blob worker's sweep; nothing before its time) or on request. Nothing when another
 * file is kept now. @returns the position of the append (or of the stream's head).
 */
export async function removeBatchSource(
  ctx: CommandContext,
  batchUuid: string,
  blobId: string,
  reason: 'expired' | 'requested',
  actor = 'blobs'
): Promise<number> {
  const r = await batchSources.handle(
    ctx,
    batchUuid,
    { type: 'RemoveBatchSource', data: { blob_id: blobId, reason, now: ctx.now().toISOString() } },
    { actor, correlation_id: batchUuid }
  )
  return r.position
}
