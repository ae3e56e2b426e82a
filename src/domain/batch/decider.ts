import { DomainError, isAtOrAfter, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import { withRun } from './hash-runs.ts'
import type { BatchCreated, BatchEvent, BatchItemResult } from './events.ts'
import { type BatchState, type Live, awaitsResult, mark } from './state.ts'
import { addChunk, type ChunkData } from './add-chunk.ts'

// The batch decider's state and AddChunk (with its rules) live beside it; their names are
// said here too, where the handlers and the worker find the batch's (`import * as batch`).
export { type BatchState, type Live, initialState, holds, awaitsResult } from './state.ts'
export { requireReceiving, requireWithinSize, requireSameEnvironment, validCount } from './add-chunk.ts'

export function evolve(state: BatchState, event: BatchEvent): BatchState {
  if (event.type === 'BatchCreated') {
    const { created_at: createdAt, ...d } = event.data
    return {
      ...d,
      status: 'receiving',
      last_chunk_at: createdAt,
      total: 0,
      valid: 0,
      processed: 0,
      hashes: [],
      chunk_uuids: new Set(),
      abandoned: new Set(),
      open: new Map()
    }
  }
  if (state.status === 'none') return state
  switch (event.type) {
    case 'BatchItemsAdded': {
      const d = event.data
      // Bounded by max_batch_size, never by the account's history.
      const hashes = withRun(
        state.hashes ?? [],
        d.items.map(item => item.hash)
      )
      const invalid = d.items.filter(item => item.invalid === true).length
      const open = new Map(state.open)
      let chunk =
        d.part === 0
          ? {
              reservation_uuid: d.reservation_uuid,
              amount: d.amount,
              first: d.first,
              size: d.chunk_items,
              pending: d.chunk_items,
              charge: 0,
              done: new Uint8Array(Math.ceil(d.chunk_items / 8))
            }
          : open.get(d.chunk_uuid)
      if (chunk) {
        chunk = mark(
          chunk,
          d.items.flatMap((item, k) => (item.invalid ? [d.first + k] : [])),
          0
        )
        open.set(d.chunk_uuid, chunk)
      }
      return {
        ...state,
        last_chunk_at: d.added_at,
        total: state.total + d.items.length,
        valid: state.valid + d.items.length - invalid,
        processed: state.processed + invalid,
        hashes,
        chunk_uuids: d.part === 0 ? new Set(state.chunk_uuids).add(d.chunk_uuid) : state.chunk_uuids,
        open
      }
    }
    case 'BatchIntakeClosed':
      return { ...state, status: 'processing', hashes: null }
    case 'BatchResultsRecorded': {
      const chunk = state.open.get(event.data.chunk_uuid)
      if (!chunk) return state
      const next = mark(
        chunk,
        event.data.results.map(r => r.i),
        event.data.results.reduce((sum, r) => sum + r.charge, 0)
      )
      return {
        ...state,
        processed: state.processed + chunk.pending - next.pending,
        open: new Map(state.open).set(event.data.chunk_uuid, next),
        held_until: null
      }
    }
    case 'BatchItemsDeferred':
      return state
    case 'BatchHeld':
      return { ...state, held_until: event.data.until }
    case 'BatchChunkProcessed': {
      const open = new Map(state.open)
      open.delete(event.data.chunk_uuid)
      return { ...state, open }
    }
    case 'BatchCompleted':
      return { ...state, status: 'completed', hashes: null }
    case 'BatchChunkAbandoned':
      return { ...state, abandoned: new Set(state.abandoned).add(event.data.chunk_uuid) }
    default:
      return ignoreUnknownEvent(event, state)
  }
}

export type BatchCommand =
  | {
      type: 'CreateBatch'
      data: Omit<BatchCreated['data'], 'created_at'> & {
        now: string
        /** Appended with the batch, in the same append. */
        first_chunk?: ChunkData
      }
    }
  | { type: 'AddChunk'; data: ChunkData }
  | {
      type: 'CloseIdleIntake'
      data: {
        reason: 'final' | 'idle' /** For `idle`: intake closes only when the latest chunk came before this instant. */
        idle_before?: string
        now: string
      }
    }
  | { type: 'RecordBatchResults'; data: { chunk_uuid: string; results: BatchItemResult[]; now: string } }
  | {
      type: 'DeferBatchItems'
      data: { chunk_uuid: string; items: Array<{ i: number; email: string }>; attempt: number; retry_at: string; deadline_at: string; now: string }
    }
  | { type: 'AbandonChunk'; data: { chunk_uuid: string; now: string } }
  | { type: 'HoldBatch'; data: { reason: 'egress_blocked'; until: string; now: string } }

/** Events that finish what `state` (after this command's other events) makes finished: settled chunks, then the batch. */
function completions(state: Live, chunks: readonly string[], now: string): BatchEvent[] {
  const events: BatchEvent[] = []
  for (const uuid of chunks) {
    const c = state.open.get(uuid)
    if (c && c.pending === 0)
      events.push({
        type: 'BatchChunkProcessed',
        data: {
          batch_uuid: state.batch_uuid,
          user_uuid: state.user_uuid,
          chunk_uuid: uuid,
          reservation_uuid: c.reservation_uuid,
          amount: c.amount,
          charge: Math.min(c.amount, c.charge),
          processed_at: now
        }
      })
  }
  return events
}

function applyAll(state: BatchState, events: readonly BatchEvent[]): BatchState {
  return events.reduce(evolve, state)
}

/** Appends BatchChunkProcessed for `chunks` now finished and BatchCompleted when intake is closed and nothing is pending. */
function finish(state: BatchState, events: BatchEvent[], chunks: readonly string[], now: string): BatchEvent[] {
  let after = applyAll(state, events) as Live
  const settled = completions(after, chunks, now)
  after = applyAll(after, settled) as Live
  const all = [...events, ...settled]
  if (after.status === 'processing' && after.processed === after.total)
    all.push({
      type: 'BatchCompleted',
      data: { batch_uuid: after.batch_uuid, user_uuid: after.user_uuid, environment: after.environment, total: after.total, completed_at: now }
    })
  return all
}

/**
 * The batch decider (one stream per batch: `batch-<uuid>`; interface "Batches", issue
 * "Bulk verification").
 * - CreateBatch → BatchCreated, with its first chunk's events (as AddChunk) when it has one; nothing when it exists.
 * - AddChunk → BatchItemsAdded in parts of BATCH_PART_ITEMS (the first carries the
 *   reservation), then BatchIntakeClosed when `final`; BatchChunkProcessed at once for a
 *   chunk without a valid item, BatchCompleted when nothing is left to verify.
 * - CloseIdleIntake → BatchIntakeClosed (and BatchCompleted when nothing is pending); nothing
 *   when intake is closed, or, for `idle`, when a chunk came after `idle_before`.
 * - RecordBatchResults → BatchResultsRecorded of the items without a result yet (a result
 *   recorded twice changes nothing), BatchChunkProcessed when its chunk is finished,
 *   BatchCompleted when the batch is.
 * - DeferBatchItems → BatchItemsDeferred of the items without a result yet.
 * - AbandonChunk → BatchChunkAbandoned unless the chunk was accepted (then nothing).
 * @throws DomainError not_found `batch.not_found`; forbidden `add_chunk.environment_mismatch`
 *   for a chunk from a credential of another environment; conflict `add_chunk.intake_closed` when
 *   intake is closed or the batch terminal; conflict `add_chunk.changed` when an item is in
 *   the batch already, the chunk was abandoned or its amount no longer matches (the handler
 *   releases its reservation and decides again); forbidden `add_chunk.max_batch_size` when
 *   the unique valid addresses would pass the plan's `max_batch_size`.
 */
export function decide(command: BatchCommand, state: BatchState): BatchEvent[] {
  if (command.type === 'CreateBatch') {
    if (state.status !== 'none') return []
    const d = command.data
    const created: BatchEvent = {
      type: 'BatchCreated',
      data: {
        batch_uuid: d.batch_uuid,
        user_uuid: d.user_uuid,
        name: d.name,
        checks: d.checks,
        cost_per_item: d.cost_per_item,
        environment: d.environment,
        key_uuid: d.key_uuid,
        agent_uuid: d.agent_uuid,
        created_at: d.now
      }
    }
    return d.first_chunk ? [created, ...decide({ type: 'AddChunk', data: d.first_chunk }, evolve(state, created))] : [created]
  }
  if (state.status === 'none') throw new DomainError('not_found', 'batch.not_found', 'no such batch')
  switch (command.type) {
    case 'AddChunk':
      return addChunk(state, command.data)
    case 'CloseIdleIntake': {
      const d = command.data
      if (state.status !== 'receiving') return []
      if (d.reason === 'idle' && d.idle_before !== undefined && isAtOrAfter(state.last_chunk_at, d.idle_before)) return []
      return finish(
        state,
        [{ type: 'BatchIntakeClosed', data: { batch_uuid: state.batch_uuid, user_uuid: state.user_uuid, reason: d.reason, closed_at: d.now } }],
        [],
        d.now
      )
    }
    case 'RecordBatchResults': {
      const d = command.data
      const chunk = state.open.get(d.chunk_uuid)
      if (!chunk) return []
      const seen = new Set<number>()
      const fresh = d.results.filter(r => {
        if (!awaitsResult(chunk, r.i) || seen.has(r.i)) return false
        seen.add(r.i)
        return true
      })
      if (fresh.length === 0) return []
      return finish(
        state,
        [
          {
            type: 'BatchResultsRecorded',
            data: {
              batch_uuid: state.batch_uuid,
              user_uuid: state.user_uuid,
              chunk_uuid: d.chunk_uuid,
              results: fresh,
              sandbox: state.environment === 'test',
              recorded_at: d.now
            }
          }
        ],
        [d.chunk_uuid],
        d.now
      )
    }
    case 'DeferBatchItems': {
      const d = command.data
      const chunk = state.open.get(d.chunk_uuid)
      if (!chunk) return []
      const items = d.items.filter(item => awaitsResult(chunk, item.i))
      if (items.length === 0) return []
      return [
        {
          type: 'BatchItemsDeferred',
          data: {
            batch_uuid: state.batch_uuid,
            user_uuid: state.user_uuid,
            chunk_uuid: d.chunk_uuid,
            items,
            attempt: d.attempt,
            retry_at: d.retry_at,
            deadline_at: d.deadline_at,
            deferred_at: d.now
          }
        }
      ]
    }
    case 'HoldBatch': {
      // Once per hold: a batch already held, or ended, says nothing new.
      const d = command.data
      if (state.status === 'completed' || (state.held_until ?? null) !== null) return []
      return [{ type: 'BatchHeld', data: { batch_uuid: state.batch_uuid, user_uuid: state.user_uuid, reason: d.reason, held_at: d.now, until: d.until } }]
    }
    case 'AbandonChunk': {
      const d = command.data
      if (state.chunk_uuids.has(d.chunk_uuid) || state.abandoned.has(d.chunk_uuid)) return []
      return [
        { type: 'BatchChunkAbandoned', data: { batch_uuid: state.batch_uuid, user_uuid: state.user_uuid, chunk_uuid: d.chunk_uuid, abandoned_at: d.now } }
      ]
    }
    default:
      return noEventsForUnknown(command)
  }
}

/**
 * Long-lived while intake is open: the state is kept between commands in each process (no
 * snapshot event: a batch is bounded by `max_batch_size`), weighed by its de-duplication
 * index (8 bytes an address) and open chunks' bitmaps.
 */
export const snapshot = {
  types: [] as string[],
  every: 1_000_000,
  weight: (state: BatchState): number =>
    state.status === 'none'
      ? 256
      : 1024 + (state.hashes ?? []).reduce((n, run) => n + run.byteLength, 0) + [...state.open.values()].reduce((n, c) => n + c.done.length + 64, 0)
}
