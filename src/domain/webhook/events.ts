import type { Environment, Event } from '../shared.ts'

/** Event kinds an endpoint can subscribe to (docs/interface.md §6). */
export const WEBHOOK_EVENTS = ['job.completed', 'batch.completed'] as const
export type WebhookEventKind = (typeof WEBHOOK_EVENTS)[number]

/**
 * An endpoint of the account (stream `webhooks-<user uuid>`, all of an account's
 * endpoints, so that the plan's cap is decided with one expected revision). `secret` is
 * the signing secret sealed with the account's data key (never in the clear).
 * `environment`: the jobs and batches it is told of, the environment of the credential
 * that created it (issue 42 item 10: a test key's endpoint hears of sandbox jobs only, a
 * live one's of live jobs only); absent on events written before: `live`.
 */
export type WebhookEndpointCreated = Event<
  'WebhookEndpointCreated',
  {
    webhook_uuid: string
    user_uuid: string
    environment?: Environment
    url: string
    events: WebhookEventKind[]
    description: string | null
    secret: string
    created_at: string
  }
>
/** Only the fields that changed are present. */
export type WebhookEndpointUpdated = Event<
  'WebhookEndpointUpdated',
  {
    webhook_uuid: string
    user_uuid: string
    url?: string
    events?: WebhookEventKind[]
    description?: string | null
    updated_at: string
  }
>
/** `reason`: `requested` (status update), `consecutive_failures` (automatic) or `gone` (the receiver answered 410). */
export type WebhookEndpointDisabled = Event<
  'WebhookEndpointDisabled',
  { webhook_uuid: string; user_uuid: string; reason: 'requested' | 'consecutive_failures' | 'gone'; consecutive_failures: number; disabled_at: string }
>
export type WebhookEndpointEnabled = Event<'WebhookEndpointEnabled', { webhook_uuid: string; user_uuid: string; enabled_at: string }>
export type WebhookEndpointDeleted = Event<'WebhookEndpointDeleted', { webhook_uuid: string; user_uuid: string; deleted_at: string }>
/** A delivery to the endpoint failed every attempt; `consecutive_failures` counts them since the last success. */
export type WebhookDeliveryFailureCounted = Event<
  'WebhookDeliveryFailureCounted',
  { webhook_uuid: string; user_uuid: string; delivery_uuid: string; consecutive_failures: number }
>
/** A delivery succeeded after failed ones: the count starts again. */
export type WebhookDeliveryFailuresCleared = Event<'WebhookDeliveryFailuresCleared', { webhook_uuid: string; user_uuid: string; delivery_uuid: string }>

/** The account's endpoints carried forward (an in-stream snapshot every SNAPSHOT_EVERY events). */
export type WebhooksSnapshotted = Event<
  'WebhooksSnapshotted',
  {
    user_uuid: string
    endpoints: Array<
      Omit<WebhookEndpointCreated['data'], 'created_at' | 'user_uuid'> & { status: 'active' | 'disabled'; consecutive_failures: number; counted: string[] }
    >
    snapshotted_at: string
  }
>

export type WebhookEvent =
  | WebhooksSnapshotted
  | WebhookEndpointCreated
  | WebhookEndpointUpdated
  | WebhookEndpointDisabled
  | WebhookEndpointEnabled
  | WebhookEndpointDeleted
  | WebhookDeliveryFailureCounted
  | WebhookDeliveryFailuresCleared

/**
 * One notification to one endpoint (stream `webhook_delivery-<uuid>`); `timestamp` is Unix
 * seconds; `job_uuid` the job it is about, or for `batch.completed` the batch (`batch_uuid`
 * in the body).
 */
export type WebhookDeliveryRequested = Event<
  'WebhookDeliveryRequested',
  {
    delivery_uuid: string
    webhook_uuid: string
    user_uuid: string
    event: WebhookEventKind
    job_uuid: string
    status: string
    timestamp: number
    /** A sample sent by `POST /api/webhooks/{uuid}/test`. */
    test: boolean
    requested_at: string
  }
>
/** One HTTP POST; `response_status` is null when no response came (`error` says why). */
export type WebhookDeliveryAttempted = Event<
  'WebhookDeliveryAttempted',
  {
    delivery_uuid: string
    webhook_uuid: string
    user_uuid: string
    event: WebhookEventKind
    job_uuid: string
    test: boolean
    attempt: number
    response_status: number | null
    error: string | null
    duration_ms: number
    succeeded: boolean
    attempted_at: string
    /** When the next attempt is due; null when this one succeeded or was the last. */
    next_attempt_at: string | null
  }
>
/** The endpoint was disabled or deleted before the delivery could succeed. */
export type WebhookDeliveryAbandoned = Event<
  'WebhookDeliveryAbandoned',
  { delivery_uuid: string; webhook_uuid: string; user_uuid: string; reason: 'endpoint_disabled' | 'endpoint_deleted'; abandoned_at: string }
>

export type WebhookDeliveryEvent = WebhookDeliveryRequested | WebhookDeliveryAttempted | WebhookDeliveryAbandoned
