import { DomainError } from '../shared.ts'
import type { WebhookEndpointCreated, WebhookEvent, WebhookEventKind } from './events.ts'

export type WebhookState =
  | { status: 'none' }
  | Omit<WebhookEndpointCreated['data'], 'created_at'> & {
    status: 'active' | 'disabled' | 'deleted'
    consecutive_failures: number
    /** The latest deliveries whose outcome was counted (a repeat is ignored), newest last. */
    counted: string[]
  }

/** How many counted delivery ids an endpoint remembers to ignore repeats. */
const COUNTED_MEMORY = 256

export const initialState = (): WebhookState => ({ status: 'none' })

export function evolve (state: WebhookState, event: WebhookEvent): WebhookState {
  if (event.type === 'WebhookEndpointCreated') {
    const { created_at: _, ...endpoint } = event.data
    return { ...endpoint, status: 'active', consecutive_failures: 0, counted: [] }
  }
  if (state.status === 'none') return state
  switch (event.type) {
    case 'WebhookEndpointUpdated': {
      const { url, events, description } = event.data
      return { ...state, ...(url !== undefined && { url }), ...(events !== undefined && { events }), ...(description !== undefined && { description }) }
    }
    case 'WebhookEndpointDisabled': return { ...state, status: 'disabled' }
    case 'WebhookEndpointEnabled': return { ...state, status: 'active', consecutive_failures: 0 }
    case 'WebhookEndpointDeleted': return { ...state, status: 'deleted' }
    case 'WebhookDeliveryFailureCounted': return { ...state, consecutive_failures: event.data.consecutive_failures, counted: [...state.counted, event.data.delivery_uuid].slice(-COUNTED_MEMORY) }
    case 'WebhookDeliveryFailuresCleared': return { ...state, consecutive_failures: 0, counted: [...state.counted, event.data.delivery_uuid].slice(-COUNTED_MEMORY) }
    default: {
      const _exhaustive: never = event
      return state
    }
  }
}

export type WebhookCommand =
  | { type: 'CreateWebhook', data: WebhookEndpointCreated['data'] & { existing_endpoints: number, max_endpoints: number } }
  | { type: 'UpdateWebhook', data: { user_uuid: string, url?: string, events?: WebhookEventKind[], description?: string | null, status?: 'active' | 'disabled', now: string } }
  | { type: 'DeleteWebhook', data: { user_uuid: string, now: string } }
  | { type: 'RecordDeliveryOutcome', data: { delivery_uuid: string, succeeded: boolean, disable_after: number, now: string } }

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/**
 * The webhook endpoint decider (interface section 4 "Webhooks", section 6 "Delivery rules").
 * - CreateWebhook → WebhookEndpointCreated, unless the plan's endpoint cap is reached.
 * - UpdateWebhook → WebhookEndpointUpdated with the changed fields, and Enabled/Disabled
 *   when `status` changes (enabling clears the failure count).
 * - DeleteWebhook → WebhookEndpointDeleted; idempotent, and an unknown endpoint or another
 *   account's changes nothing (the interface lists no 404 for DELETE).
 * - RecordDeliveryOutcome: a failed delivery counts one more consecutive failure and, at
 *   `disable_after`, disables an active endpoint (`consecutive_failures`); a success after
 *   failures clears the count. The same delivery is counted once (the latest 256 are remembered).
 * @throws DomainError forbidden `create_webhook.limit_reached`; conflict
 *   `create_webhook.exists`; not_found `update_webhook.not_found` (unknown, deleted or another account's).
 */
export function decide (command: WebhookCommand, state: WebhookState): WebhookEvent[] {
  switch (command.type) {
    case 'CreateWebhook': {
      if (state.status !== 'none') throw new DomainError('conflict', 'create_webhook.exists', 'endpoint already exists')
      const { existing_endpoints: existing, max_endpoints: max, ...data } = command.data
      if (existing >= max) throw new DomainError('forbidden', 'create_webhook.limit_reached', `your plan allows ${max} webhook endpoints`)
      return [{ type: 'WebhookEndpointCreated', data }]
    }
    case 'UpdateWebhook': {
      const d = command.data
      if (state.status === 'none' || state.status === 'deleted' || state.user_uuid !== d.user_uuid) throw new DomainError('not_found', 'update_webhook.not_found', 'no such webhook endpoint')
      const ids = { webhook_uuid: state.webhook_uuid, user_uuid: state.user_uuid }
      const out: WebhookEvent[] = []
      const changed = {
        ...(d.url !== undefined && d.url !== state.url && { url: d.url }),
        ...(d.events !== undefined && !sameList(d.events, state.events) && { events: d.events }),
        ...(d.description !== undefined && d.description !== state.description && { description: d.description })
      }
      if (Object.keys(changed).length > 0) out.push({ type: 'WebhookEndpointUpdated', data: { ...ids, ...changed, updated_at: d.now } })
      if (d.status === 'disabled' && state.status === 'active') out.push({ type: 'WebhookEndpointDisabled', data: { ...ids, reason: 'requested', consecutive_failures: state.consecutive_failures, disabled_at: d.now } })
      if (d.status === 'active' && state.status === 'disabled') out.push({ type: 'WebhookEndpointEnabled', data: { ...ids, enabled_at: d.now } })
      return out
    }
    case 'DeleteWebhook':
      if (state.status === 'none' || state.status === 'deleted' || state.user_uuid !== command.data.user_uuid) return []
      return [{ type: 'WebhookEndpointDeleted', data: { webhook_uuid: state.webhook_uuid, user_uuid: state.user_uuid, deleted_at: command.data.now } }]
    case 'RecordDeliveryOutcome': {
      const d = command.data
      if (state.status === 'none' || state.status === 'deleted' || state.counted.includes(d.delivery_uuid)) return []
      const ids = { webhook_uuid: state.webhook_uuid, user_uuid: state.user_uuid, delivery_uuid: d.delivery_uuid }
      if (d.succeeded) return state.consecutive_failures > 0 ? [{ type: 'WebhookDeliveryFailuresCleared', data: ids }] : []
      const failures = state.consecutive_failures + 1
      const out: WebhookEvent[] = [{ type: 'WebhookDeliveryFailureCounted', data: { ...ids, consecutive_failures: failures } }]
      if (state.status === 'active' && failures >= d.disable_after) {
        out.push({ type: 'WebhookEndpointDisabled', data: { webhook_uuid: state.webhook_uuid, user_uuid: state.user_uuid, reason: 'consecutive_failures', consecutive_failures: failures, disabled_at: d.now } })
      }
      return out
    }
    default: {
      const _exhaustive: never = command
      return []
    }
  }
}
