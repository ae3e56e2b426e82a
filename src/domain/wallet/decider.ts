import { DomainError } from '../shared.ts'
import type { WalletEvent } from './events.ts'

export interface WalletState {
  /** Tokens available to reserve. */
  balance: number
  /** Open reservations: job uuid → tokens held. */
  reserved: Map<string, number>
  /** Jobs whose reservation was captured or released. */
  settled: Set<string>
  /** Grant uuids already applied (grants are idempotent by uuid). */
  grants: Set<string>
}

export const initialState = (): WalletState => ({ balance: 0, reserved: new Map(), settled: new Set(), grants: new Set() })

export function evolve (state: WalletState, event: WalletEvent): WalletState {
  switch (event.type) {
    case 'TokensGranted':
      state.grants.add(event.data.grant_uuid)
      return { ...state, balance: state.balance + event.data.amount }
    case 'TokensReserved':
      state.reserved.set(event.data.job_uuid, event.data.amount)
      return { ...state, balance: state.balance - event.data.amount }
    case 'TokensCaptured':
      state.reserved.delete(event.data.job_uuid)
      state.settled.add(event.data.job_uuid)
      return state
    case 'TokensReleased':
      state.reserved.delete(event.data.job_uuid)
      state.settled.add(event.data.job_uuid)
      return { ...state, balance: state.balance + event.data.amount }
    default: {
      const _exhaustive: never = event
      return state
    }
  }
}

export type WalletCommand =
  | { type: 'GrantTokens', data: { user_uuid: string, grant_uuid: string, amount: number, source: 'plan' | 'operator', plan: string | null, reason: string, now: string } }
  | { type: 'ReserveTokens', data: { user_uuid: string, job_uuid: string, amount: number, now: string } }
  | { type: 'CaptureTokens', data: { user_uuid: string, job_uuid: string, amount: number, now: string } }
  | { type: 'ReleaseTokens', data: { user_uuid: string, job_uuid: string, reason: string, now: string } }

/**
 * The wallet decider (one stream per account: `wallet-<user uuid>`).
 * Grants are idempotent by `grant_uuid`; a reservation is idempotent by job; capture and
 * release settle an open reservation once and are no-ops afterwards. A capture takes at
 * most the reserved amount and gives back the rest in the same append.
 * @throws DomainError payment_required `submit_job.insufficient_tokens` when the balance is short.
 * @throws DomainError invalid `wallet.invalid_amount` for a non-positive or fractional amount.
 */
export function decide (command: WalletCommand, state: WalletState): WalletEvent[] {
  switch (command.type) {
    case 'GrantTokens': {
      const d = command.data
      if (!Number.isSafeInteger(command.data.amount) || command.data.amount <= 0) throw new DomainError('invalid', 'wallet.invalid_amount', 'amount must be a positive whole number of tokens')
      if (state.grants.has(command.data.grant_uuid)) return []
      return [{ type: 'TokensGranted', data: { user_uuid: d.user_uuid, grant_uuid: command.data.grant_uuid, amount: command.data.amount, source: command.data.source, plan: command.data.plan, reason: command.data.reason, granted_at: d.now } }]
    }
    case 'ReserveTokens': {
      const d = command.data
      if (!Number.isSafeInteger(command.data.amount) || command.data.amount <= 0) throw new DomainError('invalid', 'wallet.invalid_amount', 'amount must be a positive whole number of tokens')
      if (state.reserved.has(d.job_uuid) || state.settled.has(d.job_uuid)) return []
      if (state.balance < command.data.amount) {
        throw new DomainError('payment_required', 'submit_job.insufficient_tokens', `this check costs ${command.data.amount} tokens; the wallet holds ${state.balance}`)
      }
      return [{ type: 'TokensReserved', data: { user_uuid: d.user_uuid, job_uuid: d.job_uuid, amount: command.data.amount, reserved_at: d.now } }]
    }
    case 'CaptureTokens': {
      const d = command.data
      const held = state.reserved.get(d.job_uuid)
      if (held === undefined) return []
      const charge = Math.max(0, Math.min(held, Math.floor(d.amount)))
      const events: WalletEvent[] = []
      if (charge > 0) events.push({ type: 'TokensCaptured', data: { user_uuid: d.user_uuid, job_uuid: d.job_uuid, amount: charge, captured_at: d.now } })
      if (held - charge > 0) events.push({ type: 'TokensReleased', data: { user_uuid: d.user_uuid, job_uuid: d.job_uuid, amount: held - charge, reason: charge === 0 ? 'not_charged' : 'unused_checks', released_at: d.now } })
      return events
    }
    case 'ReleaseTokens': {
      const d = command.data
      const amount = state.reserved.get(d.job_uuid)
      if (amount === undefined) return []
      return [{ type: 'TokensReleased', data: { user_uuid: d.user_uuid, job_uuid: d.job_uuid, amount, reason: command.data.reason, released_at: d.now } }]
    }
    default: {
      const _exhaustive: never = command
      return []
    }
  }
}
