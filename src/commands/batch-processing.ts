import * as batch from '../domain/batch/decider.ts'
import * as wallet from '../domain/wallet/decider.ts'
import type { BatchChunkProcessed, BatchItemResult } from '../domain/batch/events.ts'
import type { TokensReserved } from '../domain/wallet/events.ts'
import { type CommandContext } from './context.ts'
import { handle, load } from './command-handler.ts'

/** Metadata of the batch worker's writes: the batch correlates them, the bus message caused them. */
const metaOf = (batchUuid: string, causation: string, actor = 'verifier'): { actor: string, correlation_id: string, causation_id: string } => ({ actor, correlation_id: batchUuid, causation_id: causation })

/**
 * Records the engine's results of items of one chunk (`batch-<uuid>`, RecordResults):
 * items with a result already are skipped by the decider, so a redelivered part records
 * nothing twice; the chunk's last result settles it (BatchChunkProcessed) and the batch's
 * last one completes it (BatchCompleted). Cost: one append on a stream whose state is bounded
 * by the plan's `max_batch_size`.
 */
export async function recordBatchResults (ctx: CommandContext, batchUuid: string, chunkUuid: string, results: BatchItemResult[], causation: string): Promise<void> {
  await handle(ctx, `batch-${batchUuid}`, batch, { type: 'RecordResults', data: { chunk_uuid: chunkUuid, results, now: ctx.now().toISOString() } }, metaOf(batchUuid, causation))
}

/** Defers greylisted items of one chunk until `retry_at` (BatchItemsDeferred: back through the bus when due), `attempt` counting from 1. */
export async function deferBatchItems (ctx: CommandContext, batchUuid: string, chunkUuid: string, items: Array<{ i: number, email: string }>, retry: { attempt: number, retry_at: string, deadline_at: string }, causation: string): Promise<void> {
  await handle(ctx, `batch-${batchUuid}`, batch, { type: 'DeferItems', data: { chunk_uuid: chunkUuid, items, ...retry, now: ctx.now().toISOString() } }, metaOf(batchUuid, causation))
}

/**
 * Settles a processed chunk's reservation (`wallet-<user>`): captures the firm verdicts'
 * `charge` and releases the rest in the same append (the wallet decider's CaptureTokens);
 * a reservation settled already changes nothing. Nothing for a chunk without one.
 */
export async function settleBatchChunk (ctx: CommandContext, chunk: BatchChunkProcessed['data'], causation: string): Promise<void> {
  if (chunk.reservation_uuid === null || chunk.amount === 0) return
  await handle(ctx, `wallet-${chunk.user_uuid}`, wallet, { type: 'CaptureTokens', data: { user_uuid: chunk.user_uuid, job_uuid: chunk.chunk_uuid, reservation_uuid: chunk.reservation_uuid, amount: chunk.charge, now: ctx.now().toISOString() } }, metaOf(chunk.batch_uuid, causation))
}

/**
 * The intake process manager's step for a chunk's reservation (TokensReserved with
 * `batch_uuid`): `accepted` when the chunk is in its batch; otherwise, once `grace_ms`
 * after the reservation have passed, the chunk is abandoned (the batch refuses it for good)
 * and the reservation released, `released`; before that, `wait` with the ms left.
 */
export async function resolveChunkReservation (ctx: CommandContext, r: TokensReserved['data'] & { batch_uuid: string, reservation_uuid: string }, graceMs: number, causation: string): Promise<{ outcome: 'accepted' | 'released' } | { outcome: 'wait', ms: number }> {
  const stream = `batch-${r.batch_uuid}`
  const s = (await load(ctx, stream, batch)).state
  if (s.status !== 'none' && s.chunk_uuids.has(r.job_uuid)) return { outcome: 'accepted' }
  const wait = Date.parse(r.reserved_at) + graceMs - ctx.now().getTime()
  if (wait > 0) return { outcome: 'wait', ms: wait }
  const now = ctx.now().toISOString()
  const meta = metaOf(r.batch_uuid, causation, 'intake')
  if (s.status !== 'none') {
    const a = await handle(ctx, stream, batch, { type: 'AbandonChunk', data: { chunk_uuid: r.job_uuid, now } }, meta)
    if (a.state.status !== 'none' && a.state.chunk_uuids.has(r.job_uuid)) return { outcome: 'accepted' }
  }
  await handle(ctx, `wallet-${r.user_uuid}`, wallet, { type: 'ReleaseTokens', data: { user_uuid: r.user_uuid, job_uuid: r.job_uuid, reservation_uuid: r.reservation_uuid, reason: 'chunk_abandoned', now } }, meta)
  return { outcome: 'released' }
}
