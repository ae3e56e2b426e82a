import t from 'tap'
import * as delivery from '../../../src/domain/webhook-delivery/decider.ts'
import type { DeliveryCommand } from '../../../src/domain/webhook-delivery/decider.ts'
import type { WebhookDeliveryAbandoned, WebhookDeliveryAttempted, WebhookDeliveryRequested } from '../../../src/domain/webhook/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// One webhook delivery (stream `webhook_delivery-<uuid>`). Interface section 6 "Delivery
// rules": 1. "best effort with bounded exponential-backoff retries"; 4. a test delivery is
// recorded "like a real attempt"; 5. each attempt is listed with "event, job UUID, response
// status and timestamp". Every command is idempotent: a redelivered bus message changes
// nothing twice.

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'
const next = '2026-11-22T10:00:30.000Z'

// Event builders.
const requested = build<WebhookDeliveryRequested>('WebhookDeliveryRequested', {
  delivery_uuid: 'd1',
  webhook_uuid: 'w1',
  user_uuid: U,
  event: 'job.completed',
  job_uuid: 'j1',
  status: 'completed',
  timestamp: 1_795_000_000,
  test: false,
  requested_at: now
})
const attempted = build<WebhookDeliveryAttempted>('WebhookDeliveryAttempted', {
  delivery_uuid: 'd1',
  webhook_uuid: 'w1',
  user_uuid: U,
  event: 'job.completed',
  job_uuid: 'j1',
  test: false,
  attempt: 1,
  response_status: 500,
  error: null,
  duration_ms: 5,
  succeeded: false,
  attempted_at: now,
  next_attempt_at: next
})
const abandoned = build<WebhookDeliveryAbandoned>('WebhookDeliveryAbandoned', {
  delivery_uuid: 'd1',
  webhook_uuid: 'w1',
  user_uuid: U,
  reason: 'endpoint_disabled',
  abandoned_at: now
})
const success = { response_status: 200, succeeded: true, next_attempt_at: null }
const lastFailure = { next_attempt_at: null }

// Command builders: an attempt is what the worker saw; the rest comes from the request.
type Seen = Extract<DeliveryCommand, { type: 'AttemptDelivery' }>['data']
const attempt = (over: Partial<Seen> = {}): DeliveryCommand => ({
  type: 'AttemptDelivery',
  data: { attempt: 1, response_status: 500, error: null, duration_ms: 5, succeeded: false, attempted_at: now, next_attempt_at: next, ...over }
})
const abandon = (reason: WebhookDeliveryAbandoned['data']['reason'] = 'endpoint_disabled'): DeliveryCommand => ({
  type: 'AbandonDelivery',
  data: { reason, now }
})

t.test('RequestDelivery', async t => {
  const d = spec(t, delivery)
  d([]).when({ type: 'RequestDelivery', data: requested().data }).then([requested()], 'a delivery is requested once per stream')
  d([requested()]).when({ type: 'RequestDelivery', data: requested().data }).thenNothing('requested once')
  d([])
    .when({ type: 'RequestDelivery', data: requested({ test: true }).data })
    .then([requested({ test: true })], 'a test delivery is requested like a real one, marked test')
  d([requested()]).thenState(s => s.status, 'pending', 'a requested delivery is pending')
})

t.test('AttemptDelivery: each attempt once, in order, until one succeeds or none are left', async t => {
  const d = spec(t, delivery)
  d([requested()]).when(attempt()).then([attempted()], 'the first attempt, failed, with the next one due')
  d([requested()])
    .when(attempt(success))
    .then([attempted(success)], 'the first attempt succeeds')
  d([requested(), attempted()]).when(attempt()).thenNothing('an attempt is recorded once')
  d([requested(), attempted()])
    .when(attempt({ attempt: 2, ...success }))
    .then([attempted({ attempt: 2, ...success })], 'the next attempt after a failure')
  d([requested()])
    .when(attempt({ attempt: 2 }))
    .thenNothing('an attempt out of order is not recorded')
  d([requested(), attempted(success)])
    .when(attempt({ attempt: 2, ...success }))
    .thenNothing('nothing after success')
  d([requested(), attempted(lastFailure)])
    .when(attempt({ attempt: 2 }))
    .thenNothing('nothing after the last attempt failed')
  d([requested(), abandoned()]).when(attempt()).thenNothing('nothing after the delivery was abandoned')
  d([]).when(attempt()).thenNothing('no delivery requested: nothing')
  d([requested({ test: true })])
    .when(attempt(success))
    .then([attempted({ test: true, ...success })], "a test delivery's attempt is recorded like a real one")
  d([requested(), attempted({ response_status: null, error: 'could not connect to the endpoint' })]).thenState(
    s => s.status !== 'none' && [s.status, s.attempts, s.next_attempt_at],
    ['pending', 1, next],
    'no response and a next attempt due: still pending'
  )
  d([requested(), attempted(success)]).thenState(s => s.status, 'delivered', 'a success delivers it')
  d([requested(), attempted(lastFailure)]).thenState(s => s.status, 'failed', 'a failure with no attempt left fails it')
})

t.test('AbandonDelivery: the endpoint went away before it succeeded', async t => {
  const d = spec(t, delivery)
  d([requested()]).when(abandon()).then([abandoned()], 'a pending delivery to a disabled endpoint is abandoned')
  d([requested(), attempted()])
    .when(abandon('endpoint_deleted'))
    .then([abandoned({ reason: 'endpoint_deleted' })], 'one with a retry due, to a deleted endpoint, too')
  d([requested(), attempted(lastFailure)])
    .when(abandon('endpoint_deleted'))
    .thenNothing('a failed delivery is over')
  d([requested(), attempted(success)])
    .when(abandon())
    .thenNothing('a delivered one is over')
  d([requested(), abandoned()]).when(abandon()).thenNothing('abandoned once')
  d([]).when(abandon()).thenNothing('no delivery requested: nothing')
})
