import { DomainError } from '../shared.ts'
import { BATCH_PART_ITEMS, type BatchEvent, type BatchItem, type BatchItemsAdded } from './events.ts'
import { holds, type Live } from './state.ts'

// AddChunk: a chunk of a list joins the batch (interface "Batches": POST /api/batches and
// POST /api/batches/{uuid}/emails), with the rules its handler also applies before it
// reserves tokens.

/** A chunk to append: new items, de-duplicated among themselves (the handler's work); the decider refuses any the batch holds already. */
export interface ChunkData {
  chunk_uuid: string
  /** The environment of the credential that sends the chunk: a batch takes chunks of its own only. */
  environment: 'live' | 'test'
  items: BatchItem[]
  duplicates: number
  reservation_uuid: string | null
  amount: number
  max_batch_size: number
  final: boolean
  now: string
}

/**
 * AddChunk's rule on the batch's lifecycle: only a batch still receiving takes a chunk. The
 * handler applies it before it reserves tokens, and the decision again.
 * @throws DomainError conflict `add_chunk.intake_closed`.
 */
export function requireReceiving(state: Live): void {
  if (state.status !== 'receiving' || state.hashes === null)
    throw new DomainError('conflict', 'add_chunk.intake_closed', state.status === 'completed' ? 'the batch is completed' : "the batch's intake is closed")
}

/**
 * AddChunk's rule on size: the unique valid addresses may not pass the plan's
 * `max_batch_size`. The handler applies it before it reserves tokens, and the decision again.
 * @throws DomainError forbidden `add_chunk.max_batch_size`.
 */
export function requireWithinSize(state: Live, valid: number, maxBatchSize: number): void {
  if (state.valid + valid > maxBatchSize)
    throw new DomainError(
      'forbidden',
      'add_chunk.max_batch_size',
      `the batch would hold ${state.valid + valid} unique valid addresses; the plan allows ${maxBatchSize}`
    )
}

/**
 * A chunk may join a batch only from a credential of the batch's environment (issue
 * "Money, tenancy, availability", item 3: a test key never reaches live money, a live key
 * never adds to a sandbox batch).
 * @throws DomainError forbidden `add_chunk.environment_mismatch`.
 */
export function requireSameEnvironment(state: Live, environment: 'live' | 'test'): void {
  if (state.environment !== environment)
    throw new DomainError(
      'forbidden',
      'add_chunk.environment_mismatch',
      `this is a ${state.environment} batch: add to it with a ${state.environment} credential`
    )
}

/** The valid items of a chunk (the ones that cost). */
export const validCount = (items: readonly BatchItem[]): number => items.filter(i => i.invalid !== true).length

/**
 * AddChunk's events (see `decide`): BatchItemsAdded in parts of BATCH_PART_ITEMS (the first
 * carries the reservation); BatchChunkProcessed at once for a chunk without a valid item;
 * BatchIntakeClosed when `final`, and BatchCompleted when nothing is left to verify.
 * @throws DomainError as `decide` says of AddChunk.
 */
export function addChunk(state: Live, d: ChunkData): BatchEvent[] {
  requireSameEnvironment(state, d.environment)
  requireReceiving(state)
  if (state.abandoned.has(d.chunk_uuid) || state.chunk_uuids.has(d.chunk_uuid))
    throw new DomainError('conflict', 'add_chunk.changed', 'this chunk was abandoned; send it again')
  if (d.items.some(item => holds(state, item.hash))) throw new DomainError('conflict', 'add_chunk.changed', 'the batch changed meanwhile; decide again')
  const valid = validCount(d.items)
  requireWithinSize(state, valid, d.max_batch_size)
  if (d.amount !== valid * state.cost_per_item) throw new DomainError('conflict', 'add_chunk.changed', 'the reservation does not match the chunk')
  const events: BatchEvent[] = []
  const parts = Math.max(1, Math.ceil(d.items.length / BATCH_PART_ITEMS))
  for (let part = 0; part < parts; part++) {
    const items = d.items.slice(part * BATCH_PART_ITEMS, (part + 1) * BATCH_PART_ITEMS)
    const e: BatchItemsAdded = {
      type: 'BatchItemsAdded',
      data: {
        batch_uuid: state.batch_uuid,
        user_uuid: state.user_uuid,
        chunk_uuid: d.chunk_uuid,
        part,
        first: state.total + part * BATCH_PART_ITEMS,
        items,
        reservation_uuid: part === 0 ? d.reservation_uuid : null,
        amount: part === 0 ? d.amount : 0,
        chunk_items: part === 0 ? d.items.length : 0,
        duplicates: part === 0 ? d.duplicates : 0,
        environment: state.environment,
        added_at: d.now
      }
    }
    events.push(e)
  }
  // Worked out without folding the parts again (each fold of a part touches the hash set).
  if (valid === 0)
    events.push({
      type: 'BatchChunkProcessed',
      data: {
        batch_uuid: state.batch_uuid,
        user_uuid: state.user_uuid,
        chunk_uuid: d.chunk_uuid,
        reservation_uuid: d.reservation_uuid,
        amount: d.amount,
        charge: 0,
        processed_at: d.now
      }
    })
  if (d.final) {
    events.push({ type: 'BatchIntakeClosed', data: { batch_uuid: state.batch_uuid, user_uuid: state.user_uuid, reason: 'final', closed_at: d.now } })
    if (state.processed + (d.items.length - valid) === state.total + d.items.length)
      events.push({
        type: 'BatchCompleted',
        data: {
          batch_uuid: state.batch_uuid,
          user_uuid: state.user_uuid,
          environment: state.environment,
          total: state.total + d.items.length,
          completed_at: d.now
        }
      })
  }
  return events
}
