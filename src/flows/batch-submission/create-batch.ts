import { DomainError } from '../../domain/shared.ts'
import * as batch from '../../domain/batch/decider.ts'
import { costOf } from '../../domain/checks.ts'
import type { CommandContext } from '../../commands/context.ts'
import type { Loaded } from '../../eventsourcing/command-handler.ts'
import { type BatchSubmitter, type ChunkOutcome, type CreateData, candidates, checksFor, acceptChunk } from './shared/batch-intake.ts'

/**
 * POST /api/batches (interface "Batches"): opens a batch and accepts its first chunk.
 * Addresses are trimmed, normalized and de-duplicated; invalid ones become `invalid`
 * items at once, at no cost. Nothing is stored when the list is refused.
 * @throws DomainError invalid `create_batch.empty` (no address), `create_batch.too_many`
 *   (above the plan's `max_chunk_size`), `create_batch.all_rejected` (no valid address),
 *   `create_batch.invalid_checks`; forbidden `create_batch.check_not_allowed`,
 *   `add_chunk.max_batch_size`; payment_required `add_chunk.insufficient_tokens`.
 */
export async function createBatch(
  ctx: CommandContext,
  by: BatchSubmitter,
  input: { emails: readonly string[]; checks?: readonly string[]; final: boolean; name?: string | null }
): Promise<ChunkOutcome> {
  const checks = checksFor(by, input.checks)
  if (input.emails.length === 0) throw new DomainError('invalid', 'create_batch.empty', 'the list holds no address')
  if (input.emails.length > by.plan.max_chunk_size)
    throw new DomainError('invalid', 'create_batch.too_many', `at most ${by.plan.max_chunk_size} addresses per request on this plan`)
  const listed = await candidates(input.emails)
  if (listed.every(c => c.invalid)) throw new DomainError('invalid', 'create_batch.all_rejected', 'no address of the list is a valid address')
  const uniqueValid = new Set(listed.filter(c => !c.invalid).map(c => c.key)).size
  if (uniqueValid > by.plan.max_batch_size)
    throw new DomainError(
      'forbidden',
      'add_chunk.max_batch_size',
      `the list holds ${uniqueValid} unique valid addresses; the plan allows ${by.plan.max_batch_size} per batch`
    )
  const batchUuid = ctx.newId()
  // The name is a customer's free text: sealed with the account's data key like the addresses (erased with the account).
  const name = input.name === undefined || input.name === null ? null : await ctx.sealer.seal(by.user_uuid, input.name)
  const creation: CreateData = {
    batch_uuid: batchUuid,
    user_uuid: by.user_uuid,
    name,
    checks,
    cost_per_item: by.environment === 'test' ? 0 : costOf(checks),
    environment: by.environment,
    key_uuid: by.key_uuid,
    agent_uuid: by.agent_uuid,
    now: ctx.now().toISOString()
  }
  // The batch is created with its first chunk in one append, after the chunk's reservation: a refused list leaves nothing.
  const none: Loaded<batch.BatchState> = { state: batch.initialState(), revision: -1, position: 0, since_snapshot: 0 }
  return await acceptChunk(ctx, by, batchUuid, listed, input.final, none, creation)
}
