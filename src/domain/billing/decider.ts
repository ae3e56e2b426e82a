import type { BillingEvent, StripeEventHandled } from './events.ts'

/** Whether the Stripe event of this stream was handled already. */
export interface StripeEventState {
  handled: boolean
}

export const initialState = (): StripeEventState => ({ handled: false })

export function evolve(_state: StripeEventState, _event: BillingEvent): StripeEventState {
  return { handled: true }
}

export type BillingCommand = { type: 'BillingWebhook'; data: StripeEventHandled['data'] }

/**
 * Stripe event receipts (idempotent by Stripe event id): BillingWebhook → StripeEventHandled the first time,
 * nothing after. A stream of one event: constant cost.
 */
export function decide(command: BillingCommand, state: StripeEventState): BillingEvent[] {
  return state.handled ? [] : [{ type: 'StripeEventHandled', data: command.data }]
}
