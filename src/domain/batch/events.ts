import type { Environment, Event } from '../shared.ts'
import type { CheckName } from '../checks.ts'

/**
 * A batch opened (interface "Batches"): the checks every item runs, their cost per item
 * (0 for test keys, which never touch the wallet) and who submitted it.
 */
export type BatchCreated = Event<
  'BatchCreated',
  {
    batch_uuid: string
    user_uuid: string
    name: string | null
    checks: CheckName[]
    cost_per_item: number
    environment: 'live' | 'test'
    key_uuid: string | null
    agent_uuid: string | null
    created_at: string
  }
>

/**
 * One item of a batch as accepted: `email` sealed with the owner's data key, `hash` the
 * batch's blind index of the normalized address (HMAC, 64 bits in hex: de-duplication across
 * chunks without the address), `invalid` set when its syntax failed (recorded `invalid`
 * at once, at no cost).
 */
export interface BatchItem {
  email: string
  hash: string
  invalid?: true
}

/**
 * A chunk accepted: its items take the indexes `first`, `first + 1`, … in the batch. A
 * chunk's items come in parts of at most BATCH_PART_ITEMS (events stay small enough for the
 * bus), all appended at once; the first part carries the chunk's reservation
 * (`reservation_uuid`, `amount` tokens on `wallet-<user>`; null and 0 when nothing is
 * charged), its size and the duplicates it dropped.
 */
export type BatchItemsAdded = Event<
  'BatchItemsAdded',
  {
    batch_uuid: string
    user_uuid: string
    chunk_uuid: string
    /** Part number within the chunk, from 0. */
    part: number
    first: number
    items: BatchItem[]
    /** First part only (0 on the others): the chunk's reservation and counts. */
    reservation_uuid: string | null
    amount: number
    chunk_items: number
    duplicates: number
    /** The batch's (absent on events written before it was carried: read as `live`). */
    environment?: Environment
    added_at: string
  }
>

/** Intake closed: by a chunk sent with `final: true`, or after `BATCH_INTAKE_IDLE_S` without one. */
export type BatchIntakeClosed = Event<'BatchIntakeClosed', { batch_uuid: string; user_uuid: string; reason: 'final' | 'idle'; closed_at: string }>

/** The result of one item as a batch keeps it; `did_you_mean` sealed like the address. */
export interface BatchItemResult {
  i: number
  verdict: 'valid' | 'invalid' | 'risky' | 'unknown'
  reason: string
  score: number
  flags: string[]
  did_you_mean: string | null
  /** Tokens this item costs (0 for `unknown`, invalid syntax and test keys). */
  charge: number
  /** The MX host asked (sealed: it names the domain's mail server); absent before this field existed. */
  mx_host?: string | null
  /** The mailbox provider of that host (`google`, `microsoft`…; not personal), when known. */
  smtp_provider?: string | null
  /** When the address was verified (ISO 8601). */
  checked_at?: string
}

/** Results of some items of one chunk, as the engine finished them; `sandbox` for a test key's batch (simulated, never in the public statistics). */
export type BatchResultsRecorded = Event<
  'BatchResultsRecorded',
  { batch_uuid: string; user_uuid: string; chunk_uuid: string; results: BatchItemResult[]; sandbox: boolean; recorded_at: string }
>

/** Greylisted items (450/451) retried at `retry_at`, until `deadline_at`; `emails` sealed, by item index. */
export type BatchItemsDeferred = Event<
  'BatchItemsDeferred',
  {
    batch_uuid: string
    user_uuid: string
    chunk_uuid: string
    items: Array<{ i: number; email: string }>
    attempt: number
    retry_at: string
    deadline_at: string
    deferred_at: string
  }
>

/**
 * Live items wait because this service cannot reach mail servers (the egress self-test finds
 * port 25 or DNS blocked): recorded once per hold, when the first part is held; the next
 * results recorded end it. `until`: the latest its parts wait (their chunk's arrival plus
 * `VERIFIER_EGRESS_HOLD_S`), then they run anyway.
 */
export type BatchHeld = Event<'BatchHeld', { batch_uuid: string; user_uuid: string; reason: 'egress_blocked'; held_at: string; until: string }>

/**
 * Every item of a chunk has its result: its reservation is settled by capturing `charge`
 * and releasing the rest (`amount - charge`), once, by the batch worker.
 */
export type BatchChunkProcessed = Event<
  'BatchChunkProcessed',
  { batch_uuid: string; user_uuid: string; chunk_uuid: string; reservation_uuid: string | null; amount: number; charge: number; processed_at: string }
>

/** Intake closed and every item has its result (terminal). */
/** `environment` is the batch's (absent on events written before it was carried: read as `live`). */
export type BatchCompleted = Event<'BatchCompleted', { batch_uuid: string; user_uuid: string; environment?: Environment; total: number; completed_at: string }>

/** A chunk whose reservation was made but whose items were never appended (its submitter died): refused for good, its reservation released. */
export type BatchChunkAbandoned = Event<'BatchChunkAbandoned', { batch_uuid: string; user_uuid: string; chunk_uuid: string; abandoned_at: string }>

export type BatchEvent =
  | BatchCreated
  | BatchItemsAdded
  | BatchIntakeClosed
  | BatchResultsRecorded
  | BatchItemsDeferred
  | BatchHeld
  | BatchChunkProcessed
  | BatchCompleted
  | BatchChunkAbandoned

/** Items per BatchItemsAdded event (about 300 KB: well under a NATS message's 1 MB). */
export const BATCH_PART_ITEMS = 2_000
