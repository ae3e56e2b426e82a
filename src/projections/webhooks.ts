import type { RecordedEvent } from '../ports/event-store.ts'
import type { WebhookDeliveryAttempted, WebhookDeliveryEvent, WebhookEvent, WebhooksSnapshotted } from '../domain/webhook/events.ts'
import { statusAfter } from '../domain/webhook-delivery/decider.ts'
import type { Environment } from '../domain/shared.ts'
import { collection, documentsProjection, erasing, foldProjection, type Folded, type Projection, type Write } from '../eventsourcing/projection.ts'
import { owned, type ReadContext } from './read-context.ts'

/** Read model `webhooks`: one document per endpoint that is not deleted (never its secret). */
export interface WebhookDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  /** The jobs and batches it hears of: its creator's environment (live for one created before endpoints had one). */
  environment: Environment
  url: string
  events: string[]
  description: string | null
  status: 'active' | 'disabled'
  /** Why it is disabled: `requested` or `consecutive_failures`; null while active. */
  disabled_reason: string | null
  consecutive_failures: number
  created_at: string
  updated_at: string
}

/** Read model `webhook_deliveries`: one document per delivery (pending ones are resumed after a restart). */
interface WebhookDeliveryDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  webhook_uuid: string
  user_uuid: string
  event: string
  job_uuid: string
  test: boolean
  status: 'pending' | 'delivered' | 'failed' | 'abandoned'
  attempts: number
  next_attempt_at: string | null
  requested_at: string
}

/** Read model `webhook_attempts`: one document per HTTP attempt (the event's data, keyed by event id), what `GET …/deliveries` lists. */
export type WebhookAttemptDoc = Omit<WebhookDeliveryAttempted['data'], 'next_attempt_at'> & { [k: string]: unknown; _id: string }

/** An account's endpoints (a handful: the plan's cap), by id and newest first. */
export const WEBHOOKS = collection({
  name: 'webhooks',
  projection: 'webhooks',
  fields: { user_uuid: 'text', created_at: 'text' },
  indexes: [['user_uuid', 'created_at']]
})
/** Deliveries: pending ones (resumed after a restart, bounded by what waits) and an account's (erasure). */
const WEBHOOK_DELIVERIES = collection({
  name: 'webhook_deliveries',
  projection: 'webhook_deliveries',
  fields: { user_uuid: 'text', status: 'text', test: 'boolean' },
  indexes: [['status', 'test'], ['user_uuid']]
})
/** Attempts of an endpoint, newest first, paged (index webhook_uuid, attempted_at). */
const WEBHOOK_ATTEMPTS = collection({
  name: 'webhook_attempts',
  projection: 'webhook_deliveries',
  fields: { user_uuid: 'text', webhook_uuid: 'text', attempted_at: 'text' },
  indexes: [['webhook_uuid', 'attempted_at'], ['user_uuid']]
})

function evolveEndpoint(doc: Folded<WebhookDoc> | null, event: RecordedEvent): WebhookDoc | null {
  const e = event as unknown as Exclude<WebhookEvent, WebhooksSnapshotted>
  if (e.type === 'WebhookEndpointCreated') {
    const d = e.data
    return {
      ...owned(d.webhook_uuid, d.user_uuid),
      environment: d.environment ?? 'live',
      url: d.url,
      events: d.events,
      description: d.description,
      status: 'active',
      disabled_reason: null,
      consecutive_failures: 0,
      created_at: d.created_at,
      updated_at: d.created_at
    }
  }
  if (doc === null) return null
  switch (e.type) {
    case 'WebhookEndpointUpdated': {
      const { url, events, description } = e.data
      return {
        ...doc,
        ...(url !== undefined && { url }),
        ...(events !== undefined && { events }),
        ...(description !== undefined && { description }),
        updated_at: e.data.updated_at
      }
    }
    case 'WebhookEndpointDisabled':
      return { ...doc, status: 'disabled', disabled_reason: e.data.reason, updated_at: e.data.disabled_at }
    case 'WebhookEndpointEnabled':
      return { ...doc, status: 'active', disabled_reason: null, consecutive_failures: 0, updated_at: e.data.enabled_at }
    case 'WebhookEndpointDeleted':
      return null
    case 'WebhookDeliveryFailureCounted':
      return { ...doc, consecutive_failures: e.data.consecutive_failures }
    case 'WebhookDeliveryFailuresCleared':
      return { ...doc, consecutive_failures: 0, updated_at: event.metadata.occurred_at }
  }
}

export const webhooksProjection = foldProjection<WebhookDoc>({
  // 3: each endpoint's environment (issue 42 item 10).
  version: 3,
  collection: WEBHOOKS,
  event_types: [
    'WebhookEndpointCreated',
    'WebhookEndpointUpdated',
    'WebhookEndpointDisabled',
    'WebhookEndpointEnabled',
    'WebhookEndpointDeleted',
    'WebhookDeliveryFailureCounted',
    'WebhookDeliveryFailuresCleared'
  ],
  key: 'webhook_uuid',
  evolve: evolveEndpoint,
  erase: true
})

/** The writes of a delivery's event: its document (folded, guarded by its `revision`) and, for an attempt, the attempt's own document (keyed by the event's id). */
function evolveDelivery(doc: Folded<WebhookDeliveryDoc> | null, event: RecordedEvent): Write[] {
  if (doc !== null && doc.revision >= event.revision) return []
  const e = event as unknown as WebhookDeliveryEvent
  const put = (next: WebhookDeliveryDoc): Write => ({ put: WEBHOOK_DELIVERIES, doc: { ...next, revision: event.revision } })
  switch (e.type) {
    case 'WebhookDeliveryRequested': {
      const d = e.data
      return [
        put({
          _id: d.delivery_uuid,
          uuid: d.delivery_uuid,
          webhook_uuid: d.webhook_uuid,
          user_uuid: d.user_uuid,
          event: d.event,
          job_uuid: d.job_uuid,
          test: d.test,
          status: 'pending',
          attempts: 0,
          next_attempt_at: null,
          requested_at: d.requested_at
        })
      ]
    }
    case 'WebhookDeliveryAttempted': {
      const { next_attempt_at: next, ...attempt } = e.data
      const kept: Write = { put: WEBHOOK_ATTEMPTS, doc: { _id: event.id, ...attempt } }
      return doc ? [kept, put({ ...doc, attempts: attempt.attempt, next_attempt_at: next, status: statusAfter(e.data) })] : [kept]
    }
    case 'WebhookDeliveryAbandoned':
      return doc ? [put({ ...doc, status: 'abandoned', next_attempt_at: null })] : []
  }
}

/** Deliveries (a fold per delivery) and their attempts (one document per attempt event). Cost: one delivery document an event. */
export const webhookDeliveriesProjection: Projection = documentsProjection({
  version: 2,
  collections: [WEBHOOK_DELIVERIES, WEBHOOK_ATTEMPTS],
  event_types: ['WebhookDeliveryRequested', 'WebhookDeliveryAttempted', 'WebhookDeliveryAbandoned', 'UserDeleted'],
  reads: event => (event.type === 'UserDeleted' ? [] : [[WEBHOOK_DELIVERIES, event.data.delivery_uuid as string]]),
  evolve: ([doc], event) =>
    event.type === 'UserDeleted'
      ? erasing([WEBHOOK_DELIVERIES, WEBHOOK_ATTEMPTS], event.data.user_uuid as string)
      : evolveDelivery(doc as Folded<WebhookDeliveryDoc> | null, event)
})

/** An endpoint by uuid (primary key), or null. */
export async function getWebhook(rc: Pick<ReadContext, 'reads'>, uuid: string): Promise<WebhookDoc | null> {
  return await rc.reads.collection<Folded<WebhookDoc>>(WEBHOOKS).get(uuid)
}

/**
 * An account's endpoints of `environment` (null: both), newest first. Cost: the account's
 * endpoints (bounded by the plan's cap), the other environment's left out as they come.
 */
export async function webhooksOf(rc: Pick<ReadContext, 'reads'>, owner: string, environment: Environment | null): Promise<WebhookDoc[]> {
  const all = await rc.reads.collection<Folded<WebhookDoc>>(WEBHOOKS).find({ where: { user_uuid: owner }, sort: [['created_at', -1]] })
  return environment === null ? all : all.filter(w => w.environment === environment)
}

/** A page of an endpoint's attempts, newest first, and their number (index webhook_uuid, attempted_at). */
export async function attemptsOf(
  rc: Pick<ReadContext, 'reads'>,
  endpoint: string,
  page: { limit: number; offset: number }
): Promise<{ items: WebhookAttemptDoc[]; total: number }> {
  const c = rc.reads.collection<WebhookAttemptDoc>(WEBHOOK_ATTEMPTS)
  const [items, total] = await Promise.all([
    c.find({ where: { webhook_uuid: endpoint }, sort: [['attempted_at', -1]], ...page }),
    c.count({ webhook_uuid: endpoint })
  ])
  return { items, total }
}
