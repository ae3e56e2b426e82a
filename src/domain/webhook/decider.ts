import { DomainError, ignoreUnknownEvent, noEventsForUnknown, type Environment } from '../shared.ts'
import type { WebhookEndpointCreated, WebhookEvent, WebhookEventKind, WebhooksSnapshotted } from './events.ts'

/** One endpoint that is not deleted, as decisions need it. */
export type Endpoint = Omit<WebhookEndpointCreated['data'], 'created_at' | 'user_uuid'> & {
  status: 'active' | 'disabled'
  consecutive_failures: number
  /** The latest deliveries whose outcome was counted (a repeat is ignored), newest last. */
  counted: string[]
}

/**
 * An account's webhook endpoints (stream `webhooks-<user uuid>`): the ones not deleted,
 * bounded by the plan's cap; deleted endpoints leave no trace in it.
 */
export interface WebhooksState {
  user_uuid: string | null
  endpoints: ReadonlyMap<string, Endpoint>
}

/** How many counted delivery ids an endpoint remembers to ignore repeats. */
const COUNTED_MEMORY = 256
/** Events between two WebhooksSnapshotted. */
export const SNAPSHOT_EVERY = 100

/** The environment an endpoint hears of (an endpoint created before endpoints had one is live). */
export const environmentOfEndpoint = (e: Pick<Endpoint, 'environment'>): Environment => e.environment ?? 'live'

/**
 * Whether a caller that sees `sees` (one environment, or null: both) sees endpoint `e`:
 * another environment's endpoint is as unknown to it as another account's (issue 42 item 10).
 */
export const sees = (e: Pick<Endpoint, 'environment'>, sees: Environment | null): boolean => sees === null || environmentOfEndpoint(e) === sees

export const initialState = (): WebhooksState => ({ user_uuid: null, endpoints: new Map() })

const withEndpoint = (state: WebhooksState, uuid: string, change: (e: Endpoint) => Endpoint): WebhooksState => {
  const e = state.endpoints.get(uuid)
  return e ? { ...state, endpoints: new Map(state.endpoints).set(uuid, change(e)) } : state
}

export function evolve(state: WebhooksState, event: WebhookEvent): WebhooksState {
  switch (event.type) {
    case 'WebhookEndpointCreated': {
      const { created_at: _, user_uuid: user, ...endpoint } = event.data
      return {
        user_uuid: user,
        endpoints: new Map(state.endpoints).set(endpoint.webhook_uuid, { ...endpoint, status: 'active', consecutive_failures: 0, counted: [] })
      }
    }
    case 'WebhooksSnapshotted':
      return { user_uuid: event.data.user_uuid, endpoints: new Map(event.data.endpoints.map(e => [e.webhook_uuid, e])) }
    case 'WebhookEndpointUpdated': {
      const { url, events, description } = event.data
      return withEndpoint(state, event.data.webhook_uuid, e => ({
        ...e,
        ...(url !== undefined && { url }),
        ...(events !== undefined && { events }),
        ...(description !== undefined && { description })
      }))
    }
    case 'WebhookEndpointDisabled':
      return withEndpoint(state, event.data.webhook_uuid, e => ({ ...e, status: 'disabled' }))
    case 'WebhookEndpointEnabled':
      return withEndpoint(state, event.data.webhook_uuid, e => ({ ...e, status: 'active', consecutive_failures: 0 }))
    case 'WebhookEndpointDeleted': {
      const endpoints = new Map(state.endpoints)
      endpoints.delete(event.data.webhook_uuid)
      return { ...state, endpoints }
    }
    case 'WebhookDeliveryFailureCounted':
      return withEndpoint(state, event.data.webhook_uuid, e => ({
        ...e,
        consecutive_failures: event.data.consecutive_failures,
        counted: [...e.counted, event.data.delivery_uuid].slice(-COUNTED_MEMORY)
      }))
    case 'WebhookDeliveryFailuresCleared':
      return withEndpoint(state, event.data.webhook_uuid, e => ({
        ...e,
        consecutive_failures: 0,
        counted: [...e.counted, event.data.delivery_uuid].slice(-COUNTED_MEMORY)
      }))
    default:
      return ignoreUnknownEvent(event, state)
  }
}

/** The snapshot that carries `state` forward: every endpoint, its arrays copied. */
export function takeSnapshot(state: WebhooksState, now: string): WebhooksSnapshotted {
  const endpoints = [...state.endpoints.values()].map(e => ({ ...e, events: [...e.events], counted: [...e.counted] }))
  return { type: 'WebhooksSnapshotted', data: { user_uuid: state.user_uuid ?? '', endpoints, snapshotted_at: now } }
}

export const snapshot = { types: ['WebhooksSnapshotted'], every: SNAPSHOT_EVERY, take: takeSnapshot } as const

export type WebhookCommand =
  | { type: 'CreateWebhook'; data: WebhookEndpointCreated['data'] & { max_endpoints: number } }
  | {
      type: 'UpdateWebhook'
      data: {
        webhook_uuid: string
        /** The environment the caller sees (null: both, a session). */
        sees: Environment | null
        url?: string
        events?: WebhookEventKind[]
        description?: string | null
        status?: 'active' | 'disabled'
        now: string
      }
    }
  | { type: 'DeleteWebhook'; data: { webhook_uuid: string; sees: Environment | null; now: string } }
  | { type: 'DeleteAllWebhooks'; data: { now: string } }
  | { type: 'RecordDeliveryOutcome'; data: { webhook_uuid: string; delivery_uuid: string; succeeded: boolean; disable_after: number; now: string } }
  | { type: 'DisableGone'; data: { webhook_uuid: string; now: string } }

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/**
 * The webhook endpoint decider (docs/interface.md §4 "Webhooks", section 6 "Delivery rules").
 * - CreateWebhook → WebhookEndpointCreated, while the account has fewer than
 *   `max_endpoints` endpoints (decided with this stream's expected revision).
 * - UpdateWebhook → WebhookEndpointUpdated with the changed fields, and Enabled/Disabled
 *   when `status` changes (enabling clears the failure count); an endpoint of another
 *   environment than the caller sees is not found (issue 42 item 10).
 * - DeleteWebhook → WebhookEndpointDeleted; idempotent, and an endpoint that is not the
 *   account's, or of another environment than the caller sees, changes nothing (the
 *   interface lists no 404 for DELETE). DeleteAllWebhooks
 *   deletes each (account deletion).
 * - RecordDeliveryOutcome: a failed delivery counts one more consecutive failure and, at
 *   `disable_after`, disables an active endpoint; a success after failures clears the
 *   count. The same delivery is counted once (the latest 256 per endpoint are remembered).
 * - DisableGone (the receiver answered 410 Gone) → WebhookEndpointDisabled `gone` of an active endpoint.
 * @throws DomainError forbidden `create_webhook.limit_reached`; conflict
 *   `create_webhook.exists`; not_found `update_webhook.not_found` (unknown, deleted or another account's).
 */
export function decide(command: WebhookCommand, state: WebhooksState): WebhookEvent[] {
  switch (command.type) {
    case 'CreateWebhook': {
      const { max_endpoints: max, ...data } = command.data
      if (state.endpoints.has(data.webhook_uuid)) throw new DomainError('conflict', 'create_webhook.exists', 'endpoint already exists')
      if (state.endpoints.size >= max) throw new DomainError('forbidden', 'create_webhook.limit_reached', `your plan allows ${max} webhook endpoints`)
      return [{ type: 'WebhookEndpointCreated', data }]
    }
    case 'UpdateWebhook': {
      const d = command.data
      const e = state.endpoints.get(d.webhook_uuid)
      if (!e || !sees(e, d.sees)) throw new DomainError('not_found', 'update_webhook.not_found', 'no such webhook endpoint')
      const ids = { webhook_uuid: d.webhook_uuid, user_uuid: state.user_uuid! }
      const out: WebhookEvent[] = []
      const changed = {
        ...(d.url !== undefined && d.url !== e.url && { url: d.url }),
        ...(d.events !== undefined && !sameList(d.events, e.events) && { events: d.events }),
        ...(d.description !== undefined && d.description !== e.description && { description: d.description })
      }
      if (Object.keys(changed).length > 0) out.push({ type: 'WebhookEndpointUpdated', data: { ...ids, ...changed, updated_at: d.now } })
      if (d.status === 'disabled' && e.status === 'active')
        out.push({ type: 'WebhookEndpointDisabled', data: { ...ids, reason: 'requested', consecutive_failures: e.consecutive_failures, disabled_at: d.now } })
      if (d.status === 'active' && e.status === 'disabled') out.push({ type: 'WebhookEndpointEnabled', data: { ...ids, enabled_at: d.now } })
      return out
    }
    case 'DeleteWebhook': {
      const e = state.endpoints.get(command.data.webhook_uuid)
      if (!e || !sees(e, command.data.sees)) return []
      return [{ type: 'WebhookEndpointDeleted', data: { webhook_uuid: command.data.webhook_uuid, user_uuid: state.user_uuid!, deleted_at: command.data.now } }]
    }
    case 'DeleteAllWebhooks':
      return [...state.endpoints.keys()].map(w => ({
        type: 'WebhookEndpointDeleted' as const,
        data: { webhook_uuid: w, user_uuid: state.user_uuid!, deleted_at: command.data.now }
      }))
    case 'RecordDeliveryOutcome': {
      const d = command.data
      const e = state.endpoints.get(d.webhook_uuid)
      if (!e || e.counted.includes(d.delivery_uuid)) return []
      const ids = { webhook_uuid: d.webhook_uuid, user_uuid: state.user_uuid!, delivery_uuid: d.delivery_uuid }
      if (d.succeeded) return e.consecutive_failures > 0 ? [{ type: 'WebhookDeliveryFailuresCleared', data: ids }] : []
      const failures = e.consecutive_failures + 1
      const out: WebhookEvent[] = [{ type: 'WebhookDeliveryFailureCounted', data: { ...ids, consecutive_failures: failures } }]
      if (e.status === 'active' && failures >= d.disable_after) {
        out.push({
          type: 'WebhookEndpointDisabled',
          data: {
            webhook_uuid: d.webhook_uuid,
            user_uuid: state.user_uuid!,
            reason: 'consecutive_failures',
            consecutive_failures: failures,
            disabled_at: d.now
          }
        })
      }
      return out
    }
    case 'DisableGone': {
      const e = state.endpoints.get(command.data.webhook_uuid)
      if (e?.status !== 'active') return []
      return [
        {
          type: 'WebhookEndpointDisabled',
          data: {
            webhook_uuid: e.webhook_uuid,
            user_uuid: state.user_uuid!,
            reason: 'gone',
            consecutive_failures: e.consecutive_failures,
            disabled_at: command.data.now
          }
        }
      ]
    }
    default:
      return noEventsForUnknown(command)
  }
}
