import * as stripeEvent from '../../domain/billing/decider.ts'
import { aggregate } from '../aggregate.ts'

/** A Stripe event handled once (`stripe_event-<Stripe event id>`: a redelivery finds it handled). */
export const stripeEvents = aggregate('stripe_event', stripeEvent)
