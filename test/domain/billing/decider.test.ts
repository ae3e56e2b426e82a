import t from 'tap'
import * as billing from '../../../src/domain/billing/decider.ts'
import type { BillingCommand } from '../../../src/domain/billing/decider.ts'
import type { StripeEventHandled } from '../../../src/domain/billing/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// Stripe event receipts (stream `stripe_event-<Stripe event id>`). Stripe delivers a webhook
// event at least once ("webhook endpoints might occasionally receive the same event more
// than once", Stripe docs, "Handle duplicate events"): handling is idempotent by event id.

const now = '2026-11-22T10:00:00.000Z'

// Event builder.
const handled = build<StripeEventHandled>('StripeEventHandled', {
  event_id: 'evt_1',
  event_type: 'customer.subscription.updated',
  user_uuid: 'u-1',
  effects: ['plan_changed'],
  handled_at: now
})

// Command builder.
const record = (over: Partial<StripeEventHandled['data']> = {}): BillingCommand => ({ type: 'BillingWebhook', data: handled(over).data })

t.test('BillingWebhook: handled once per Stripe event id', async t => {
  const b = spec(t, billing)
  b([]).when(record()).then([handled()], 'the first receipt of an event is recorded with what it did')
  b([handled()]).when(record()).thenNothing('the same event again: nothing (Stripe redelivers)')
  b([handled()])
    .when(record({ effects: ['tokens_granted'], handled_at: '2026-11-22T10:05:00.000Z' }))
    .thenNothing('a redelivery that would do something else changes nothing either: the first handling stands')
  b([])
    .when(record({ event_id: 'evt_2', event_type: 'invoice.paid', user_uuid: null, effects: [] }))
    .then(
      [handled({ event_id: 'evt_2', event_type: 'invoice.paid', user_uuid: null, effects: [] })],
      'an event of no known account is recorded too, with no effect'
    )
  b([]).thenState(s => s.handled, false, 'a new stream: not handled')
  b([handled()]).thenState(s => s.handled, true, 'after one receipt: handled')
})
