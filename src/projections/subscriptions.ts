import type { RecordedEvent } from '../ports/event-store.ts'
import type { SubscriptionEvent, Subscription } from '../domain/subscription/events.ts'
import { freeSubscription, planInEffect } from '../domain/subscription/decider.ts'
import { FREE, planFor, type Plan, type PlanCatalogue } from '../domain/plans.ts'
import { collection, foldProjection, type Folded } from '../eventsourcing/projection.ts'
import type { ReadContext } from './read-context.ts'

/** Read model `subscriptions`: one document per account that ever left Free (others are Free by absence). */
export interface SubscriptionDoc extends Subscription {
  [k: string]: unknown
  _id: string
  updated_at: string
}

/** By account (primary key): one lookup per authenticated request that needs the plan. */
const SUBSCRIPTIONS = collection({ name: 'subscriptions', projection: 'subscriptions', fields: { user_uuid: 'text' }, indexes: [['user_uuid']] })

function evolve(_doc: Folded<SubscriptionDoc> | null, event: RecordedEvent): SubscriptionDoc {
  const e = event as unknown as SubscriptionEvent
  return { _id: e.data.subscription.user_uuid, ...e.data.subscription, updated_at: e.data.at }
}

/** The subscriptions (each event carries the whole subscription); an erased account's document is deleted. */
export const subscriptionsProjection = foldProjection<SubscriptionDoc>({
  version: 1,
  collection: SUBSCRIPTIONS,
  event_types: ['PlanStarted', 'PlanChanged', 'PlanEnded', 'BillingCustomerLinked'],
  erase: true,
  key: 'user_uuid',
  evolve
})

/** What the queries read: the read store, and a clock (`now`; the system clock without one). */
type Reads = Pick<ReadContext, 'reads'> & { now?: () => Date }

/**
 * The account's subscription (interface `GET /api/subscription`): Free when it never
 * subscribed. `plan` is the plan in effect now (`planInEffect`: Free's while the status holds
 * no paid plan, e.g. `incomplete`, `unpaid`, or `past_due` past its grace), so the limits shown
 * are the ones applied; `status`, `cycle` and the period stay the subscription's own, and
 * `subscribed_plan` names the plan subscribed to. One primary-key read.
 */
export async function subscriptionOf(rc: Reads, owner: string): Promise<Subscription & { updated_at: string | null; subscribed_plan: string }> {
  const doc = await rc.reads.collection<Folded<SubscriptionDoc>>(SUBSCRIPTIONS).get(owner)
  if (!doc) return { ...freeSubscription(owner), updated_at: null, subscribed_plan: FREE }
  const { _id, revision, ...subscription } = doc
  return { ...subscription, plan: planInEffect(subscription, rc.now?.() ?? new Date()), subscribed_plan: subscription.plan }
}

/**
 * The plan whose caps, rate limit, scopes and checks apply to the account now, from
 * `catalogue`: its subscription's plan while the subscription's status holds it
 * (`planInEffect`), Free otherwise and by default. One primary-key read.
 */
export async function planOf(rc: Reads, catalogue: PlanCatalogue, owner: string): Promise<Plan> {
  const doc = await rc.reads.collection<Folded<SubscriptionDoc>>(SUBSCRIPTIONS).get(owner)
  return planFor(catalogue, doc ? planInEffect(doc, rc.now?.() ?? new Date()) : null)
}
