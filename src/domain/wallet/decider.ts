import { Map as PersistentMap } from 'immutable'
import { DomainError, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import type { AcceptedJob, WalletBooksClosed, WalletEvent } from './events.ts'

/** One open reservation: tokens held for a job. */
export interface Reservation {
  reservation_uuid: string
  amount: number
}

/**
 * What the wallet decides on: the available balance, the open reservations and the latest
 * grants. Its size is bounded by the jobs in flight, never by the account's history:
 * settled reservations leave no trace in it.
 */
export interface WalletState {
  user_uuid: string | null
  /** Tokens available to reserve. */
  balance: number
  /**
   * Open reservations: job uuid → the reservation holding tokens for it. A persistent map
   * (Immutable.js, a hash array mapped trie): each event's change shares the rest, so a
   * fold costs O(log n) an event, not a copy of every reservation in flight.
   */
  reserved: PersistentMap<string, Reservation>
  /** The latest RECENT_GRANTS grant uuids, oldest first. */
  recent_grants: readonly string[]
}

/** Events between two closings of the books (the most a command reads back, plus one append). */
export const CLOSE_BOOKS_EVERY = 1_000
/** Grant uuids remembered for idempotency: retried grants arrive within minutes, not 256 grants later. */
export const RECENT_GRANTS = 256

export const initialState = (): WalletState => ({ user_uuid: null, balance: 0, reserved: PersistentMap(), recent_grants: [] })

/** The reservation of an event: written ones name it; older ones are named by their job. */
const reservationOf = (d: { job_uuid: string; reservation_uuid?: string }): string => d.reservation_uuid ?? d.job_uuid

export function evolve(state: WalletState, event: WalletEvent): WalletState {
  const user = event.data.user_uuid
  switch (event.type) {
    case 'TokensGranted':
      return {
        ...state,
        user_uuid: user,
        balance: state.balance + event.data.amount,
        recent_grants: [...state.recent_grants, event.data.grant_uuid].slice(-RECENT_GRANTS)
      }
    case 'TokensReserved':
      return {
        ...state,
        user_uuid: user,
        balance: state.balance - event.data.amount,
        reserved: state.reserved.set(event.data.job_uuid, { reservation_uuid: reservationOf(event.data), amount: event.data.amount })
      }
    case 'TokensCaptured': {
      // A capture takes its amount out of the reservation; the decider releases the rest in the same append.
      const held = state.reserved.get(event.data.job_uuid)
      if (!held) return state
      const left = held.amount - event.data.amount
      return { ...state, reserved: left > 0 ? state.reserved.set(event.data.job_uuid, { ...held, amount: left }) : state.reserved.delete(event.data.job_uuid) }
    }
    case 'TokensReleased':
      return { ...state, balance: state.balance + event.data.amount, reserved: state.reserved.delete(event.data.job_uuid) }
    case 'WalletBooksClosed':
      return {
        user_uuid: user,
        balance: event.data.balance,
        reserved: PersistentMap(event.data.reservations.map(r => [r.job_uuid, { reservation_uuid: r.reservation_uuid, amount: r.amount }] as const)),
        recent_grants: event.data.recent_grants
      }
    default:
      return ignoreUnknownEvent(event, state)
  }
}

/** The closing event that carries `state` forward. */
export function closeBooks(state: WalletState, now: string): WalletBooksClosed {
  const reservations = [...state.reserved].map(([job, r]) => ({ job_uuid: job, reservation_uuid: r.reservation_uuid, amount: r.amount }))
  const { balance, recent_grants } = state
  return { type: 'WalletBooksClosed', data: { user_uuid: state.user_uuid ?? '', balance, reservations, recent_grants: [...recent_grants], closed_at: now } }
}

/** The books are closed every CLOSE_BOOKS_EVERY events (in-stream snapshot, read back to by `handle`). */
export const snapshot = { types: ['WalletBooksClosed'], every: CLOSE_BOOKS_EVERY, take: closeBooks } as const

export type WalletCommand =
  | {
      type: 'GrantTokens'
      data: { user_uuid: string; grant_uuid: string; amount: number; source: 'plan' | 'operator' | 'top_up'; plan: string | null; reason: string; now: string }
    }
  | {
      type: 'ReserveTokens'
      data: { user_uuid: string; job_uuid: string; reservation_uuid: string; amount: number; job?: AcceptedJob; batch_uuid?: string; now: string }
    }
  | { type: 'CaptureTokens'; data: { user_uuid: string; job_uuid: string; reservation_uuid: string | null; amount: number; now: string } }
  | { type: 'ReleaseTokens'; data: { user_uuid: string; job_uuid: string; reservation_uuid: string | null; reason: string; now: string } }

/** The open reservation of `job` when it is `reservation` (any, when null). */
function open(state: WalletState, job: string, reservation: string | null): Reservation | null {
  const held = state.reserved.get(job)
  return held && (reservation === null || held.reservation_uuid === reservation) ? held : null
}

const assertAmount = (amount: number): void => {
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new DomainError('invalid', 'wallet.invalid_amount', 'amount must be a positive whole number of tokens')
}

/**
 * The wallet decider (one stream per account: `wallet-<user uuid>`; docs/design/architecture.md "Money").
 * - GrantTokens → TokensGranted; idempotent by `grant_uuid` among the latest RECENT_GRANTS.
 * - ReserveTokens → TokensReserved when the balance covers it; while the job holds an
 *   open reservation, nothing (the caller reads which one from the state).
 * - CaptureTokens → TokensCaptured of at most what the job's reservation holds, and
 *   TokensReleased of the rest in the same append; nothing when that reservation is not
 *   open (settled already, or another one). A fractional or negative charge is refused,
 *   never rounded (tokens are whole).
 * - ReleaseTokens → TokensReleased of the reservation; nothing when it is not open.
 * Captures and releases name the reservation they settle, so settling a job twice, or a
 * second reservation made for a job that was settled already, never takes tokens twice.
 * @throws DomainError payment_required `submit_job.insufficient_tokens` when the balance is short.
 * @throws DomainError invalid `wallet.invalid_amount` for a non-positive or fractional amount
 *   (a capture may be 0: it releases the whole reservation).
 */
export function decide(command: WalletCommand, state: WalletState): WalletEvent[] {
  switch (command.type) {
    case 'GrantTokens': {
      const d = command.data
      assertAmount(d.amount)
      if (state.recent_grants.includes(d.grant_uuid)) return []
      return [
        {
          type: 'TokensGranted',
          data: { user_uuid: d.user_uuid, grant_uuid: d.grant_uuid, amount: d.amount, source: d.source, plan: d.plan, reason: d.reason, granted_at: d.now }
        }
      ]
    }
    case 'ReserveTokens': {
      const d = command.data
      assertAmount(d.amount)
      if (state.reserved.has(d.job_uuid)) return []
      if (state.balance < d.amount) {
        throw new DomainError('payment_required', 'submit_job.insufficient_tokens', `this check costs ${d.amount} tokens; the wallet holds ${state.balance}`, {
          amount: d.amount,
          balance: state.balance
        })
      }
      return [
        {
          type: 'TokensReserved',
          data: {
            user_uuid: d.user_uuid,
            job_uuid: d.job_uuid,
            reservation_uuid: d.reservation_uuid,
            amount: d.amount,
            reserved_at: d.now,
            ...(d.job && { job: d.job }),
            ...(d.batch_uuid !== undefined && { batch_uuid: d.batch_uuid })
          }
        }
      ]
    }
    case 'CaptureTokens': {
      const d = command.data
      // Money is never rounded: a charge is a whole number of tokens (0 releases all), or refused.
      if (!Number.isSafeInteger(d.amount) || d.amount < 0)
        throw new DomainError('invalid', 'wallet.invalid_amount', 'a capture is a whole, non-negative number of tokens')
      const held = open(state, d.job_uuid, d.reservation_uuid)
      if (!held) return []
      const charge = Math.min(held.amount, d.amount)
      const ids = { user_uuid: d.user_uuid, job_uuid: d.job_uuid, reservation_uuid: held.reservation_uuid }
      const events: WalletEvent[] = []
      if (charge > 0) events.push({ type: 'TokensCaptured', data: { ...ids, amount: charge, captured_at: d.now } })
      if (held.amount - charge > 0)
        events.push({
          type: 'TokensReleased',
          data: { ...ids, amount: held.amount - charge, reason: charge === 0 ? 'not_charged' : 'unused_checks', released_at: d.now }
        })
      return events
    }
    case 'ReleaseTokens': {
      const d = command.data
      const held = open(state, d.job_uuid, d.reservation_uuid)
      if (!held) return []
      return [
        {
          type: 'TokensReleased',
          data: {
            user_uuid: d.user_uuid,
            job_uuid: d.job_uuid,
            reservation_uuid: held.reservation_uuid,
            amount: held.amount,
            reason: d.reason,
            released_at: d.now
          }
        }
      ]
    }
    default:
      return noEventsForUnknown(command)
  }
}
