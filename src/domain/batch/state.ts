import { type HashRun, runsHold } from './hash-runs.ts'
import type { BatchCreated } from './events.ts'

// The batch decider's state: the batch, its de-duplication index while intake is open, and
// its open chunks, each with one bit per item that has its result.

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
type BatchStatus = 'receiving' | 'processing' | 'completed'

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
      /** While held for egress (BatchHeld, until the next results): until when at the latest; absent or null otherwise. */
      held_until?: string | null
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
export function mark(chunk: OpenChunk, indexes: readonly number[], charge: number): OpenChunk {
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
