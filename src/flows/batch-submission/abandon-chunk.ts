import type { TokensReserved } from '../../domain/wallet/events.ts'
import type { CommandContext } from '../../commands/context.ts'
import { workerMeta } from '../../eventsourcing/command-handler.ts'
import { batches } from '../../commands/batch/aggregate.ts'
import { wallets } from '../../commands/wallet/aggregate.ts'

/**
 * The intake process manager's step for a chunk's reservation (TokensReserved with
 * `batch_uuid`): `accepted` when the chunk is in its batch; otherwise, once `grace_ms`
 * after the reservation have passed, the chunk is abandoned (the batch refuses it for good)
 * and the reservation released, `released`; before that, `wait` with the ms left.
 */
export async function abandonChunk(
  ctx: CommandContext,
  r: TokensReserved['data'] & { batch_uuid: string; reservation_uuid: string },
  graceMs: number,
  causation: string
): Promise<{ outcome: 'accepted' | 'released' } | { outcome: 'wait'; ms: number }> {
  const s = (await batches.load(ctx, r.batch_uuid)).state
  if (s.status !== 'none' && s.chunk_uuids.has(r.job_uuid)) return { outcome: 'accepted' }
  const wait = Date.parse(r.reserved_at) + graceMs - ctx.now().getTime()
  if (wait > 0) return { outcome: 'wait', ms: wait }
  const now = ctx.now().toISOString()
  const meta = workerMeta(r.batch_uuid, causation, 'intake')
  if (s.status !== 'none') {
    const a = await batches.handle(ctx, r.batch_uuid, { type: 'AbandonChunk', data: { chunk_uuid: r.job_uuid, now } }, meta)
    if (a.state.status !== 'none' && a.state.chunk_uuids.has(r.job_uuid)) return { outcome: 'accepted' }
  }
  await wallets.handle(
    ctx,
    r.user_uuid,
    { type: 'ReleaseTokens', data: { user_uuid: r.user_uuid, job_uuid: r.job_uuid, reservation_uuid: r.reservation_uuid, reason: 'chunk_abandoned', now } },
    meta
  )
  return { outcome: 'released' }
}
