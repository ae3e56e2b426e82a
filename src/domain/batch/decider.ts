import { DomainError, isAtOrAfter, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import { type HashRun, runsHold, withRun } from './hash-runs.ts'
import { BATCH_PART_ITEMS, type BatchCreated, type BatchEvent, type BatchItem, type BatchItemResult, type BatchItemsAdded } from './events.ts'

/** A chunk whose items do not all have their result yet. `done` has one bit per item (index `first + k` → bit k). */
export interface OpenChunk {
  reservation_uuid: string | null
  amount: number
  first: number
  size: number
  pending: number
  charge: number
  done: Uint8Array
}

/** Lifecycle: receiving (intake open) → processing (intake closed, items pending) → completed. */
export type BatchStatus = 'receiving' | 'processing' | 'completed'

export type BatchState =
  | { status: 'none' }
  | (Omit<BatchCreated['data'], 'created_at'> & {
      status: BatchStatus
      last_chunk_at: string
      /** Items (unique addresses, invalid ones included). */
      total: number
      /** Unique valid addresses: what `max_batch_size` counts. */
      valid: number
      /** Items with their result. */
      processed: number
      /**
       * Blind indexes of every item while intake is open (de-duplication), as sorted runs of
       * 64-bit values (8 bytes an item): a part adds a run, and runs merge as a binary counter's
       * bits carry (at most log2(parts) + 1 runs; each item copied log2(parts) times in all).
       * States share runs and never change them; null once intake closed.
       */
      hashes: ReadonlyArray<HashRun> | null
      /** Chunks accepted, and those abandoned before they were. */
      chunk_uuids: ReadonlySet<string>
      abandoned: ReadonlySet<string>
      /** Chunks with items still pending, by uuid. */
      open: ReadonlyMap<string, OpenChunk>
    })

export type Live = Exclude<BatchState, { status: 'none' }>

export const initialState = (): BatchState => ({ status: 'none' })

/** Whether the batch holds an item with this blind index. Cost: a binary search in each run. */
export function holds(state: Live, hash: string): boolean {
  if (state.hashes === null) return false
  return runsHold(state.hashes, hash)
}

const bit = (done: Uint8Array, k: number): boolean => (done[k >> 3] & (1 << (k & 7))) !== 0

/** Whether item `index` of the batch belongs to `chunk` and has no result yet (the test of RecordBatchResults and DeferBatchItems; the batch worker asks it before it verifies). */
export function awaitsResult(chunk: OpenChunk, index: number): boolean {
  const k = index - chunk.first
  return k >= 0 && k < chunk.size && !bit(chunk.done, k)
}

/** The chunk after `indexes` got their results (a copy: states are never changed in place), and how many were new. */
function mark(chunk: OpenChunk, indexes: readonly number[], charge: number): OpenChunk {
  const done = new Uint8Array(chunk.done)
  let fresh = 0
  for (const i of indexes) {
    const k = i - chunk.first
    if (k < 0 || k >= chunk.size || bit(done, k)) continue
    done[k >> 3] |= 1 << (k & 7)
    fresh++
  }
  return { ...chunk, done, pending: chunk.pending - fresh, charge: chunk.charge + charge }
}

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
      return { ...state, processed: state.processed + chunk.pending - next.pending, open: new Map(state.open).set(event.data.chunk_uuid, next) }
    }
    case 'BatchItemsDeferred':
      return state
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
      type: 'CloseIntake'
      data: {
        reason: 'final' | 'idle' /** For `idle`: intake closes only when the latest chunk came before this instant. */
        idle_before?: string
        now: string
      }
    }
  | { type: 'RecordResults'; data: { chunk_uuid: string; results: BatchItemResult[]; now: string } }
  | {
      type: 'DeferItems'
      data: { chunk_uuid: string; items: Array<{ i: number; email: string }>; attempt: number; retry_at: string; deadline_at: string; now: string }
    }
  | { type: 'AbandonChunk'; data: { chunk_uuid: string; now: string } }

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
    all.push({ type: 'BatchCompleted', data: { batch_uuid: after.batch_uuid, user_uuid: after.user_uuid, total: after.total, completed_at: now } })
  return all
}

/**
 * The batch decider (one stream per batch: `batch-<uuid>`; interface "Batches", issue
 * "Bulk verification").
 * - CreateBatch → BatchCreated, with its first chunk's events (as AddChunk) when it has one; nothing when it exists.
 * - AddChunk → BatchItemsAdded in parts of BATCH_PART_ITEMS (the first carries the
 *   reservation), then BatchIntakeClosed when `final`; BatchChunkProcessed at once for a
 *   chunk without a valid item, BatchCompleted when nothing is left to verify.
 * - CloseIntake → BatchIntakeClosed (and BatchCompleted when nothing is pending); nothing
 *   when intake is closed, or, for `idle`, when a chunk came after `idle_before`.
 * - RecordResults → BatchResultsRecorded of the items without a result yet (a result
 *   recorded twice changes nothing), BatchChunkProcessed when its chunk is finished,
 *   BatchCompleted when the batch is.
 * - DeferItems → BatchItemsDeferred of the items without a result yet.
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
    case 'AddChunk': {
      const d = command.data
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
            data: { batch_uuid: state.batch_uuid, user_uuid: state.user_uuid, total: state.total + d.items.length, completed_at: d.now }
          })
      }
      return events
    }
    case 'CloseIntake': {
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
    case 'RecordResults': {
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
    case 'DeferItems': {
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
