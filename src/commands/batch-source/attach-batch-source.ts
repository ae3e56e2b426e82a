import { DomainError } from '../../domain/shared.ts'
import type { CommandContext } from '../context.ts'
import { batchSources } from './aggregate.ts'
import { readBatch } from '../batch/read.ts'

/** What a kept file is, as the route read it (the bytes are in the blob store already). */
export interface SourceFile {
  blob_id: string
  file_name: string
  format: 'csv' | 'txt' | 'xlsx'
  bytes: number
  column: string | null
}

/**
 * Keeps a list's file beside its batch (`batch-source-<batch uuid>`, AttachBatchSource) for
 * `retention_days`: its name sealed with the account's data key, its bytes already in the
 * blob store (sealed too). A file kept before is replaced (its blob deleted by the blob
 * worker). Cost: the batch's state as loaded (bounded by the plan's batch size), one small stream.
 * @returns the expiry (ISO 8601) and the append's position.
 * @throws DomainError not_found `batch.not_found` for an unknown batch or another account's.
 */
export async function attachBatchSource(
  ctx: CommandContext,
  owner: string,
  batchUuid: string,
  file: SourceFile,
  retentionDays: number
): Promise<{ attached_at: string; expires_at: string; position: number }> {
  const b = await readBatch(ctx, batchUuid)
  if (b.status === 'none' || b.user_uuid !== owner) throw new DomainError('not_found', 'batch.not_found', 'no such batch')
  const now = ctx.now()
  const expires = new Date(now.getTime() + retentionDays * 86_400_000).toISOString()
  const name = await ctx.sealer.seal(owner, file.file_name)
  const r = await batchSources.handle(
    ctx,
    batchUuid,
    {
      type: 'AttachBatchSource',
      data: {
        batch_uuid: batchUuid,
        user_uuid: owner,
        blob_id: file.blob_id,
        file_name: name,
        format: file.format,
        bytes: file.bytes,
        column: file.column,
        expires_at: expires,
        now: now.toISOString()
      }
    },
    { actor: owner, correlation_id: batchUuid }
  )
  return { attached_at: now.toISOString(), expires_at: expires, position: r.position }
}
