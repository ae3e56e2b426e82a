import * as stripeEvent from '../../domain/billing/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** A Stripe event handled once (`stripe_event-<Stripe event id>`: a redelivery finds it handled). */
export const stripeEvents = aggregate('stripe_event', stripeEvent)
