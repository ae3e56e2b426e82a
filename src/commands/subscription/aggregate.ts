import * as subscription from '../../domain/subscription/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** An account's plan subscription (`subscription-<user uuid>`: every event carries it whole). */
export const subscriptions = aggregate('subscription', subscription)
