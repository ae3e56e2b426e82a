import type { WalletBooksClosed, WalletEvent } from './events.ts'
import { evolve, initialState, type WalletState } from './decider.ts'

/** What a replay of a whole wallet stream finds. */
export interface WalletAudit {
  state: WalletState
  /** Sums over the whole ledger, in tokens. */
  granted: number
  reserved: number
  captured: number
  released: number
  /** Closings of the books checked against the replay. */
  closings: number
  /** Each place where the stream disagrees with itself (empty when the ledger is sound). */
  discrepancies: string[]
}

/**
 * Replays a wallet stream from its first event (docs/design/architecture.md "Ledger audit"): folds
 * every event, and checks that each WalletBooksClosed carries exactly the balance and the
 * open reservations that the events before it make, that the balance never goes below
 * zero, and that captures and releases only settle what was reserved.
 * @param events the stream's events in revision order, from revision 0.
 */
export function auditWallet(events: readonly WalletEvent[]): WalletAudit {
  let state = initialState()
  const sums = { granted: 0, reserved: 0, captured: 0, released: 0, closings: 0 }
  const discrepancies: string[] = []
  events.forEach((e, revision) => {
    switch (e.type) {
      case 'TokensGranted':
        sums.granted += e.data.amount
        break
      case 'TokensReserved':
        sums.reserved += e.data.amount
        break
      case 'TokensCaptured':
      case 'TokensReleased': {
        const held = state.reserved.get(e.data.job_uuid)
        if (!held || (e.data.reservation_uuid !== undefined && held.reservation_uuid !== e.data.reservation_uuid))
          discrepancies.push(`revision ${revision}: ${e.type} of job ${e.data.job_uuid} settles no open reservation`)
        else if (e.data.amount > held.amount)
          discrepancies.push(`revision ${revision}: ${e.type} of ${e.data.amount} tokens exceeds the ${held.amount} held for job ${e.data.job_uuid}`)
        if (e.type === 'TokensCaptured') sums.captured += e.data.amount
        else sums.released += e.data.amount
        break
      }
      case 'WalletBooksClosed': {
        sums.closings++
        for (const d of closingDiscrepancies(state, e)) discrepancies.push(`revision ${revision}: ${d}`)
        break
      }
    }
    state = evolve(state, e)
    if (state.balance < 0) discrepancies.push(`revision ${revision}: balance below zero (${state.balance})`)
  })
  return { state, ...sums, discrepancies }
}

/**
 * How a closing of the books disagrees with the ledger before it (docs/design/architecture.md "Money":
 * a closing carries the balance and the open reservations forward, so it must hold exactly
 * what the events before it make): the balance, and the open reservations (job,
 * reservation, amount). @returns the discrepancies, in words (empty when it agrees).
 */
export function closingDiscrepancies(before: WalletState, closing: WalletBooksClosed): string[] {
  const open = [...before.reserved]
    .map(([job, r]) => `${job}:${r.reservation_uuid}:${r.amount}`)
    .sort()
    .join(',')
  const carried = closing.data.reservations
    .map(r => `${r.job_uuid}:${r.reservation_uuid}:${r.amount}`)
    .sort()
    .join(',')
  const found: string[] = []
  if (closing.data.balance !== before.balance) found.push(`books closed at ${closing.data.balance} tokens, the ledger before it makes ${before.balance}`)
  if (open !== carried) found.push('books closed with other open reservations than the ledger before it holds')
  return found
}
