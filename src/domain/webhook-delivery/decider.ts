import { ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import type { WebhookDeliveryAttempted, WebhookDeliveryEvent, WebhookDeliveryRequested } from '../webhook/events.ts'

/** A webhook delivery (stream `webhook_delivery-<uuid>`): requested, then attempts until one succeeds or none are left. */
export type DeliveryState =
  | { status: 'none' }
  | {
      status: 'pending' | 'delivered' | 'failed' | 'abandoned'
      request: WebhookDeliveryRequested['data']
      attempts: number
      /** When the next attempt is due (RFC 3339); null before the first one. */
      next_attempt_at: string | null
    }

export const initialState = (): DeliveryState => ({ status: 'none' })

/** The ids every event of a delivery carries: its own, its endpoint's and its account's. */
const identity = (r: WebhookDeliveryRequested['data']): { delivery_uuid: string; webhook_uuid: string; user_uuid: string } => ({
  delivery_uuid: r.delivery_uuid,
  webhook_uuid: r.webhook_uuid,
  user_uuid: r.user_uuid
})

/** Where a delivery stands after an attempt: delivered, failed (none left) or still pending. */
export function statusAfter(a: Pick<WebhookDeliveryAttempted['data'], 'succeeded' | 'next_attempt_at'>): 'delivered' | 'failed' | 'pending' {
  return a.succeeded ? 'delivered' : a.next_attempt_at === null ? 'failed' : 'pending'
}

export function evolve(state: DeliveryState, event: WebhookDeliveryEvent): DeliveryState {
  if (event.type === 'WebhookDeliveryRequested') return { status: 'pending', request: event.data, attempts: 0, next_attempt_at: null }
  if (state.status === 'none') return state
  switch (event.type) {
    case 'WebhookDeliveryAttempted': {
      const d = event.data
      return { ...state, attempts: d.attempt, next_attempt_at: d.next_attempt_at, status: statusAfter(d) }
    }
    case 'WebhookDeliveryAbandoned':
      return { ...state, status: 'abandoned', next_attempt_at: null }
    default:
      return ignoreUnknownEvent(event, state)
  }
}

export type DeliveryCommand =
  | { type: 'RequestDelivery'; data: WebhookDeliveryRequested['data'] }
  | { type: 'AttemptDelivery'; data: Omit<WebhookDeliveryAttempted['data'], 'delivery_uuid' | 'webhook_uuid' | 'user_uuid' | 'event' | 'job_uuid' | 'test'> }
  | { type: 'AbandonDelivery'; data: { reason: 'endpoint_disabled' | 'endpoint_deleted'; now: string } }

/**
 * The delivery decider. Every command is idempotent, so a redelivered bus message or a
 * second worker changes nothing twice:
 * - RequestDelivery on a new stream → WebhookDeliveryRequested (else nothing);
 * - AttemptDelivery with the next attempt number of a pending delivery → WebhookDeliveryAttempted
 *   (else nothing: that attempt is already recorded or the delivery is over);
 * - AbandonDelivery of a pending delivery → WebhookDeliveryAbandoned.
 */
export function decide(command: DeliveryCommand, state: DeliveryState): WebhookDeliveryEvent[] {
  switch (command.type) {
    case 'RequestDelivery':
      return state.status === 'none' ? [{ type: 'WebhookDeliveryRequested', data: command.data }] : []
    case 'AttemptDelivery': {
      if (state.status !== 'pending' || command.data.attempt !== state.attempts + 1) return []
      const r = state.request
      return [
        {
          type: 'WebhookDeliveryAttempted',
          data: { ...identity(r), event: r.event, job_uuid: r.job_uuid, test: r.test, ...command.data }
        }
      ]
    }
    case 'AbandonDelivery': {
      if (state.status !== 'pending') return []
      const r = state.request
      return [
        {
          type: 'WebhookDeliveryAbandoned',
          data: { ...identity(r), reason: command.data.reason, abandoned_at: command.data.now }
        }
      ]
    }
    default:
      return noEventsForUnknown(command)
  }
}
