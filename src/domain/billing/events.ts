import type { Event } from '../shared.ts'

/**
 * A Stripe webhook event was handled (stream `stripe_event-<Stripe event id>`): a repeat
 * of the same event id changes nothing. `effects` names what it did, for audit.
 */
export type StripeEventHandled = Event<
  'StripeEventHandled',
  { event_id: string; event_type: string; user_uuid: string | null; effects: string[]; handled_at: string }
>

export type BillingEvent = StripeEventHandled
