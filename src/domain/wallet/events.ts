import type { Event } from '../shared.ts'
import type { CheckName } from '../checks.ts'

/** Tokens added to the wallet: a plan's allowance or an operator's credit. */
export type TokensGranted = Event<
  'TokensGranted',
  {
    user_uuid: string
    grant_uuid: string
    amount: number
    /** Why: a plan's period (`plan`), an operator's credit, or a top-up pack bought (`top_up`). */
    source: 'plan' | 'operator' | 'top_up'
    plan: string | null
    reason: string
    granted_at: string
  }
>

/**
 * What a reservation pays for: the job it accepts, carried in the same event so that the
 * reservation is the submission's one commit point (the job stream is created from it).
 * `email` is sealed with the owner's data key.
 */
export interface AcceptedJob {
  email: string
  checks: CheckName[]
  key_uuid: string | null
  queued_at: string
  /** The address's blind index in its account (JobQueued's `email_index`); absent on events written before it was kept. */
  email_index?: string
}

/**
 * Tokens held for a job (docs/design/architecture.md "Money"). `reservation_uuid` tells one
 * reservation from another for the same job (absent on events written before it existed:
 * the job uuid stands in for it). `job`, when present, is the job this reservation accepts;
 * `batch_uuid`, when present, names the batch of the chunk it pays for.
 */
export type TokensReserved = Event<
  'TokensReserved',
  {
    user_uuid: string
    job_uuid: string
    reservation_uuid?: string
    amount: number
    reserved_at: string
    job?: AcceptedJob
    /** The batch whose chunk this reservation pays for (`job_uuid` is then the chunk's uuid). */
    batch_uuid?: string
  }
>

/** A reservation turned into a charge (firm verdict). */
export type TokensCaptured = Event<'TokensCaptured', { user_uuid: string; job_uuid: string; reservation_uuid?: string; amount: number; captured_at: string }>

/** A reservation given back (verdict `unknown`, the job failed, unused checks, or a duplicate reservation). */
export type TokensReleased = Event<
  'TokensReleased',
  { user_uuid: string; job_uuid: string; reservation_uuid?: string; amount: number; reason: string; released_at: string }
>

/**
 * The books closed: the balance and the open reservations carried forward (Oskar Dudycz,
 * "closing the books"). Appended in the wallet stream every CLOSE_BOOKS_EVERY events, so
 * that a command reads back only to the latest one; an auditor replaying the stream from
 * its start can check each against the balance the events before it make.
 */
export type WalletBooksClosed = Event<
  'WalletBooksClosed',
  {
    user_uuid: string
    balance: number
    reservations: Array<{ job_uuid: string; reservation_uuid: string; amount: number }>
    /** The latest grant uuids (grants are idempotent by uuid within this window). */
    recent_grants: string[]
    closed_at: string
  }
>

export type WalletEvent = TokensGranted | TokensReserved | TokensCaptured | TokensReleased | WalletBooksClosed
