import type { Projection } from './projection.ts'
import { alreadyApplied } from './projection.ts'
import type { WebhookDeliveryAttempted, WebhookDeliveryEvent, WebhookEvent, WebhooksSnapshotted } from '../domain/webhook/events.ts'
import { statusAfter } from '../domain/webhook/delivery.ts'

/** Read model `webhooks`: one document per endpoint that is not deleted (never its secret). */
export interface WebhookDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  url: string
  events: string[]
  description: string | null
  status: 'active' | 'disabled'
  /** Why it is disabled: `requested` or `consecutive_failures`; null while active. */
  disabled_reason: string | null
  consecutive_failures: number
  created_at: string
  updated_at: string
  revision: number
}

/** Read model `webhook_deliveries`: one document per delivery (pending ones are resumed after a restart). */
export interface WebhookDeliveryDoc {
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
  revision: number
}

/** Read model `webhook_attempts`: one document per HTTP attempt (the event's data, keyed by event id), what `GET …/deliveries` lists. */
export type WebhookAttemptDoc = Omit<WebhookDeliveryAttempted['data'], 'next_attempt_at'> & { [k: string]: unknown, _id: string }

export const webhooksProjection: Projection = {
  name: 'webhooks',
  event_types: [
    'WebhookEndpointCreated', 'WebhookEndpointUpdated', 'WebhookEndpointDisabled', 'WebhookEndpointEnabled',
    'WebhookEndpointDeleted', 'WebhookDeliveryFailureCounted', 'WebhookDeliveryFailuresCleared'
  ],
  async apply (event, { store }) {
    const hooks = store.collection<WebhookDoc>('webhooks')
    const e = event as unknown as Exclude<WebhookEvent, WebhooksSnapshotted>
    const at = event.metadata.occurred_at
    if (e.type === 'WebhookEndpointCreated') {
      const d = e.data
      if (alreadyApplied(await hooks.get(d.webhook_uuid), event)) return
      await hooks.put({ _id: d.webhook_uuid, uuid: d.webhook_uuid, user_uuid: d.user_uuid, url: d.url, events: d.events, description: d.description, status: 'active', disabled_reason: null, consecutive_failures: 0, created_at: d.created_at, updated_at: d.created_at, revision: event.revision })
      return
    }
    const doc = await hooks.get(e.data.webhook_uuid)
    if (!doc || alreadyApplied(doc, event)) return
    const next = { ...doc, revision: event.revision }
    switch (e.type) {
      case 'WebhookEndpointUpdated': {
        const { url, events, description } = e.data
        await hooks.put({ ...next, ...(url !== undefined && { url }), ...(events !== undefined && { events }), ...(description !== undefined && { description }), updated_at: e.data.updated_at })
        return
      }
      case 'WebhookEndpointDisabled': await hooks.put({ ...next, status: 'disabled', disabled_reason: e.data.reason, updated_at: e.data.disabled_at }); return
      case 'WebhookEndpointEnabled': await hooks.put({ ...next, status: 'active', disabled_reason: null, consecutive_failures: 0, updated_at: e.data.enabled_at }); return
      case 'WebhookEndpointDeleted': await hooks.delete(doc._id); return
      case 'WebhookDeliveryFailureCounted': await hooks.put({ ...next, consecutive_failures: e.data.consecutive_failures }); return
      case 'WebhookDeliveryFailuresCleared': await hooks.put({ ...next, consecutive_failures: 0, updated_at: at }); return
    }
  }
}

export const webhookDeliveriesProjection: Projection = {
  name: 'webhook_deliveries',
  event_types: ['WebhookDeliveryRequested', 'WebhookDeliveryAttempted', 'WebhookDeliveryAbandoned'],
  async apply (event, { store }) {
    const deliveries = store.collection<WebhookDeliveryDoc>('webhook_deliveries')
    const e = event as unknown as WebhookDeliveryEvent
    const doc = await deliveries.get(e.data.delivery_uuid)
    if (alreadyApplied(doc, event)) return
    switch (e.type) {
      case 'WebhookDeliveryRequested': {
        const d = e.data
        await deliveries.put({ _id: d.delivery_uuid, uuid: d.delivery_uuid, webhook_uuid: d.webhook_uuid, user_uuid: d.user_uuid, event: d.event, job_uuid: d.job_uuid, test: d.test, status: 'pending', attempts: 0, next_attempt_at: null, requested_at: d.requested_at, revision: event.revision })
        return
      }
      case 'WebhookDeliveryAttempted': {
        const { next_attempt_at: next, ...attempt } = e.data
        // The attempt document's id is the event id: applying it twice writes it once.
        await store.collection<WebhookAttemptDoc>('webhook_attempts').put({ _id: event.id, ...attempt })
        if (doc) await deliveries.put({ ...doc, attempts: attempt.attempt, next_attempt_at: next, status: statusAfter(e.data), revision: event.revision })
        return
      }
      case 'WebhookDeliveryAbandoned':
        if (doc) await deliveries.put({ ...doc, status: 'abandoned', next_attempt_at: null, revision: event.revision })
    }
  }
}
