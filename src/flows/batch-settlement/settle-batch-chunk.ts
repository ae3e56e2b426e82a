import type { BatchChunkProcessed } from '../../domain/batch/events.ts'
import type { CommandContext } from '../../commands/context.ts'
import { workerMeta } from '../../eventsourcing/command-handler.ts'
import { wallets } from '../../commands/wallet/aggregate.ts'

/**
 * Settles a processed chunk's reservation (`wallet-<user>`): captures the firm verdicts'
 * `charge` and releases the rest in the same append (the wallet decider's CaptureTokens);
 * a reservation settled already changes nothing. Nothing for a chunk without one.
 */
export async function settleBatchChunk(ctx: CommandContext, chunk: BatchChunkProcessed['data'], causation: string): Promise<void> {
  if (chunk.reservation_uuid === null || chunk.amount === 0) return
  await wallets.handle(
    ctx,
    chunk.user_uuid,
    {
      type: 'CaptureTokens',
      data: {
        user_uuid: chunk.user_uuid,
        job_uuid: chunk.chunk_uuid,
        reservation_uuid: chunk.reservation_uuid,
        amount: chunk.charge,
        now: ctx.now().toISOString()
      }
    },
    workerMeta(chunk.batch_uuid, causation)
  )
}
