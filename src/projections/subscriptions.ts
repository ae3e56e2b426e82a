import type { RecordedEvent } from '../infra/eventstore/port.ts'
import type { SubscriptionEvent, Subscription } from '../domain/subscription/events.ts'
import { freeSubscription } from '../domain/subscription/decider.ts'
import { planFor, type Plan, type PlanCatalogue } from '../domain/plans.ts'
import { collection, foldProjection, type Folded, type ReadContext } from './projection.ts'

/** Read model `subscriptions`: one document per account that ever left Free (others are Free by absence). */
export interface SubscriptionDoc extends Subscription {
  [k: string]: unknown
  _id: string
  updated_at: string
}

/** By account (primary key): one lookup per authenticated request that needs the plan. */
export const SUBSCRIPTIONS = collection({ name: 'subscriptions', projection: 'subscriptions', fields: { user_uuid: 'text' }, indexes: [['user_uuid']] })

function evolve (_doc: Folded<SubscriptionDoc> | null, event: RecordedEvent): SubscriptionDoc {
  const e = event as unknown as SubscriptionEvent
  return { _id: e.data.subscription.user_uuid, ...e.data.subscription, updated_at: e.data.at }
}

/** The subscriptions (each event carries the whole subscription); an erased account's document is deleted. */
export const subscriptionsProjection = foldProjection<SubscriptionDoc>({
  name: 'subscriptions',
  version: 1,
  collection: SUBSCRIPTIONS,
  event_types: ['PlanStarted', 'PlanChanged', 'PlanEnded', 'BillingCustomerLinked'],
  erase: true,
  id: event => event.data.user_uuid as string,
  evolve
})

/** The account's subscription (interface `GET /api/subscription`): Free when it never subscribed. One primary-key read. */
export async function subscriptionOf (rc: Pick<ReadContext, 'reads'>, owner: string): Promise<Subscription & { updated_at: string | null }> {
  const doc = await rc.reads.collection<Folded<SubscriptionDoc>>(SUBSCRIPTIONS).get(owner)
  if (!doc) return { ...freeSubscription(owner), updated_at: null }
  const { _id, revision, ...subscription } = doc
  return subscription
}

/** The plan the account is on now, from `catalogue` (Free by default). One primary-key read. */
export async function planOf (rc: Pick<ReadContext, 'reads'>, catalogue: PlanCatalogue, owner: string): Promise<Plan> {
  const doc = await rc.reads.collection<Folded<SubscriptionDoc>>(SUBSCRIPTIONS).get(owner)
  return planFor(catalogue, doc?.plan)
}
