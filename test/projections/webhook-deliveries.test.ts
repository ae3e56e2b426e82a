import t from 'tap'
import { event, projectionSpec } from '../support/projection-spec.ts'
import { webhookDeliveriesProjection } from '../../src/projections/webhooks.ts'

// The webhook deliveries read model, given/when/then: a document per delivery that
// follows its attempts, and one document per attempt (what an endpoint's delivery list
// shows). The oracle is a delivery's life written out by hand.

const U = '01a700f4-0000-7000-8000-000000000001'
const W = '01a700f4-0000-7000-8000-000000000401'
const D = '01a700f4-0000-7000-8000-000000000501'
const J = '01a700f4-0000-7000-8000-000000000601'
const stream = `webhook_delivery-${D}`
const at = '2026-11-25T10:05:00.000Z'
const later = '2026-11-25T10:06:00.000Z'
const requested = event(
  stream,
  'WebhookDeliveryRequested',
  {
    delivery_uuid: D,
    webhook_uuid: W,
    user_uuid: U,
    event: 'job.completed',
    job_uuid: J,
    status: 'completed',
    timestamp: 1795000000,
    test: false,
    requested_at: at
  },
  at
)
/** Attempt `attempt`, answered `status` (0: no answer), the next one due at `next`. */
const attempted = (attempt: number, status: number, next: string | null) =>
  event(
    stream,
    'WebhookDeliveryAttempted',
    {
      delivery_uuid: D,
      webhook_uuid: W,
      user_uuid: U,
      event: 'job.completed',
      job_uuid: J,
      test: false,
      attempt,
      response_status: status === 0 ? null : status,
      error: status === 0 ? 'ECONNREFUSED' : null,
      duration_ms: 12,
      succeeded: status >= 200 && status < 300,
      attempted_at: later,
      next_attempt_at: next
    },
    later
  )

t.test('requested, failed once, then delivered: the delivery follows, each attempt kept', async t => {
  await projectionSpec(
    t,
    webhookDeliveriesProjection
  )(requested)
    .when(attempted(1, 500, later), attempted(2, 200, null))
    .then({
      webhook_deliveries: [{ _id: D, status: 'delivered', attempts: 2, next_attempt_at: null, revision: 2 }],
      webhook_attempts: [
        { webhook_uuid: W, attempt: 1, response_status: 500, succeeded: false },
        { webhook_uuid: W, attempt: 2, response_status: 200, succeeded: true }
      ]
    })
})

t.test('abandoned when its endpoint is disabled', async t => {
  await projectionSpec(t, webhookDeliveriesProjection)(requested, attempted(1, 0, later))
    .when(
      event(stream, 'WebhookDeliveryAbandoned', { delivery_uuid: D, webhook_uuid: W, user_uuid: U, reason: 'endpoint_disabled', abandoned_at: later }, later)
    )
    .then({
      webhook_deliveries: [{ status: 'abandoned', attempts: 1, next_attempt_at: null }],
      webhook_attempts: [{ attempt: 1, response_status: null, error: 'ECONNREFUSED' }]
    })
})

t.test('an erased account loses its deliveries and attempts', async t => {
  await projectionSpec(t, webhookDeliveriesProjection)(requested, attempted(1, 200, null))
    .when(event(`user-${U}`, 'UserDeleted', { user_uuid: U, deleted_at: later }, later))
    .then({ webhook_deliveries: [], webhook_attempts: [] })
})
