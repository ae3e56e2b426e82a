import { DomainError } from '../../domain/shared.ts'
import * as batch from '../../domain/batch/decider.ts'
import type { CommandContext } from '../../commands/context.ts'
import { type BatchSubmitter, type ChunkOutcome, candidates, checksFor, acceptChunk } from './shared/batch-intake.ts'
import { batches } from '../../commands/batch/aggregate.ts'

/**
 * POST /api/batches/{uuid}/emails: a chunk, de-duplicated against the whole batch; the
 * cumulative unique valid count may not pass the plan's `max_batch_size`. `final` closes
 * intake. An empty chunk is accepted only with `final: true` (it closes intake).
 * @throws DomainError not_found `batch.not_found` (unknown, another account's, or another
 *   environment's for a credential that sees one environment: issue 42 item 10; a session,
 *   which sees both, adds in the batch's environment); forbidden
 *   `add_chunk.environment_mismatch` (checked before anything is reserved); invalid `add_chunk.empty`, `add_chunk.too_many`; conflict `add_chunk.intake_closed`;
 *   forbidden `add_chunk.max_batch_size`, `create_batch.check_not_allowed` (the plan no
 *   longer allows a check of the batch); payment_required `add_chunk.insufficient_tokens`.
 */
export async function addChunk(
  ctx: CommandContext,
  by: BatchSubmitter,
  batchUuid: string,
  input: { emails: readonly string[]; final?: boolean }
): Promise<ChunkOutcome> {
  if (input.emails.length > by.plan.max_chunk_size)
    throw new DomainError('invalid', 'add_chunk.too_many', `at most ${by.plan.max_chunk_size} addresses per request on this plan`)
  const loaded = await batches.load(ctx, batchUuid)
  const s = loaded.state
  if (s.status === 'none' || s.user_uuid !== by.user_uuid || (by.sees != null && by.sees !== s.environment))
    throw new DomainError('not_found', 'batch.not_found', 'no such batch')
  // Before any reservation: a test key's chunk must not spend live tokens even for a moment.
  // A session (which sees both) adds in the batch's own environment, the one it chose at creation.
  if (by.sees == null) by = { ...by, environment: s.environment }
  batch.requireSameEnvironment(s, by.environment)
  batch.requireReceiving(s)
  if (input.emails.length === 0 && input.final !== true)
    throw new DomainError('invalid', 'add_chunk.empty', 'the chunk holds no address (send `final: true` alone to close intake)')
  // New addresses only for checks the plan allows now; an empty final chunk (closing intake) always.
  if (input.emails.length > 0) checksFor(by, s.checks)
  return await acceptChunk(ctx, by, batchUuid, await candidates(input.emails), input.final === true, loaded)
}
