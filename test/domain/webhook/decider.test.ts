import t from 'tap'
import * as webhook from '../../../src/domain/webhook/decider.ts'
import type { WebhookCommand } from '../../../src/domain/webhook/decider.ts'
import type {
  WebhookDeliveryFailureCounted,
  WebhookDeliveryFailuresCleared,
  WebhookEndpointCreated,
  WebhookEndpointDeleted,
  WebhookEndpointDisabled,
  WebhookEndpointEnabled,
  WebhookEndpointUpdated,
  WebhooksSnapshotted
} from '../../../src/domain/webhook/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// The webhook endpoints of one account (stream `webhooks-<user uuid>`). Interface section 4
// "Webhooks": POST 403 "plan endpoint limit reached"; PATCH "any of url, events, description,
// status", 404; DELETE "204 (idempotent)". Section 3: "endpoint active → repeated consecutive
// delivery failures → disabled, automatic"; section 6 "Delivery rules" 2: "after repeated
// consecutive failures the endpoint is disabled automatically".

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'

// Event builders.
const created = build<WebhookEndpointCreated>('WebhookEndpointCreated', {
  webhook_uuid: 'w1',
  user_uuid: U,
  url: 'https://h.example/x',
  events: ['job.completed'],
  description: null,
  secret: 'sealed',
  created_at: now
})
const createdAs = (id: string): WebhookEndpointCreated => created({ webhook_uuid: id })
const updated = build<WebhookEndpointUpdated>('WebhookEndpointUpdated', { webhook_uuid: 'w1', user_uuid: U, updated_at: now })
const disabled = build<WebhookEndpointDisabled>('WebhookEndpointDisabled', {
  webhook_uuid: 'w1',
  user_uuid: U,
  reason: 'requested',
  consecutive_failures: 0,
  disabled_at: now
})
const enabled = build<WebhookEndpointEnabled>('WebhookEndpointEnabled', { webhook_uuid: 'w1', user_uuid: U, enabled_at: now })
const deleted = build<WebhookEndpointDeleted>('WebhookEndpointDeleted', { webhook_uuid: 'w1', user_uuid: U, deleted_at: now })
const failed = (delivery: string, n: number): WebhookDeliveryFailureCounted => ({
  type: 'WebhookDeliveryFailureCounted',
  data: { webhook_uuid: 'w1', user_uuid: U, delivery_uuid: delivery, consecutive_failures: n }
})
const cleared = (delivery: string): WebhookDeliveryFailuresCleared => ({
  type: 'WebhookDeliveryFailuresCleared',
  data: { webhook_uuid: 'w1', user_uuid: U, delivery_uuid: delivery }
})
const snapshotted = build<WebhooksSnapshotted>('WebhooksSnapshotted', { user_uuid: U, endpoints: [], snapshotted_at: now })

// Command builders.
const create = (id: string, max = 2): WebhookCommand => ({ type: 'CreateWebhook', data: { ...createdAs(id).data, max_endpoints: max } })
const update = (over: Omit<Partial<Extract<WebhookCommand, { type: 'UpdateWebhook' }>['data']>, 'now'>): WebhookCommand => ({
  type: 'UpdateWebhook',
  data: { webhook_uuid: 'w1', sees: null, ...over, now }
})
const del = (id = 'w1', sees: 'live' | 'test' | null = null): WebhookCommand => ({ type: 'DeleteWebhook', data: { webhook_uuid: id, sees, now } })
const outcome = (delivery: string, succeeded: boolean, disableAfter = 3, id = 'w1'): WebhookCommand => ({
  type: 'RecordDeliveryOutcome',
  data: { webhook_uuid: id, delivery_uuid: delivery, succeeded, disable_after: disableAfter, now }
})
const gone = (id = 'w1'): WebhookCommand => ({ type: 'DisableGone', data: { webhook_uuid: id, now } })

t.test("CreateWebhook: the plan's endpoint cap", async t => {
  const w = spec(t, webhook)
  w([]).when(create('w1')).then([created()], 'a first endpoint is created; the cap does not enter the event')
  w([created()]).when(create('w1')).thenRejects('create_webhook.exists', 409, 'the same endpoint uuid is not created twice')
  w([createdAs('w1'), createdAs('w2')])
    .when(create('w3'))
    .thenRejects('create_webhook.limit_reached', 403, 'a third endpoint past the plan cap of two is refused (403 "plan endpoint limit reached")')
  w([createdAs('w1'), createdAs('w2'), deleted()])
    .when(create('w3'))
    .then([createdAs('w3')], 'a deleted endpoint frees its place')
  w([createdAs('w1'), createdAs('w2'), disabled()])
    .when(create('w3'))
    .thenRejects('create_webhook.limit_reached', 403, 'a disabled endpoint still exists and still counts')
})

t.test('UpdateWebhook: changed fields, and status', async t => {
  const w = spec(t, webhook)
  w([created()])
    .when(update({ url: 'https://h.example/y' }))
    .then([updated({ url: 'https://h.example/y' })], 'a new url: only the url is in the event')
  w([created()])
    .when(update({ events: ['job.completed', 'batch.completed'] }))
    .then([updated({ events: ['job.completed', 'batch.completed'] })], 'new events')
  w([created()])
    .when(update({ description: 'billing' }))
    .then([updated({ description: 'billing' })], 'a description')
  w([created({ description: 'billing' })])
    .when(update({ description: null }))
    .then([updated({ description: null })], 'a description removed')
  w([created()])
    .when(update({ url: 'https://h.example/x', events: ['job.completed'], description: null }))
    .thenNothing('no change, no event')
  w([created()])
    .when(update({ status: 'disabled' }))
    .then([disabled()], 'status disabled: the endpoint is disabled as requested')
  w([created()])
    .when(update({ url: 'https://h.example/y', status: 'disabled' }))
    .then([updated({ url: 'https://h.example/y' }), disabled()], 'a change and a status in one request')
  w([created(), disabled()])
    .when(update({ status: 'active' }))
    .then([enabled()], 'status active re-enables a disabled endpoint')
  w([created()])
    .when(update({ status: 'active' }))
    .thenNothing('an active endpoint set active: nothing')
  w([created(), disabled()])
    .when(update({ status: 'disabled' }))
    .thenNothing('a disabled endpoint set disabled: nothing')
  w([created()])
    .when(update({ webhook_uuid: 'w-of-another-account', description: 'x' }))
    .thenRejects('update_webhook.not_found', 404, "another account's endpoint is not in this stream (404)")
  w([created(), deleted()])
    .when(update({ description: 'x' }))
    .thenRejects('update_webhook.not_found', 404, 'a deleted endpoint is not found (404)')
  // Issue 42 item 10: a credential sees its own environment's endpoints only; one created before endpoints had one is live.
  w([created()])
    .when(update({ sees: 'test', description: 'x' }))
    .thenRejects('update_webhook.not_found', 404, 'a live endpoint is not found by a test key')
  w([created({ environment: 'test' })])
    .when(update({ sees: 'live', status: 'disabled' }))
    .thenRejects('update_webhook.not_found', 404, 'nor a sandbox one by a live key')
  w([created({ environment: 'test' })])
    .when(update({ sees: 'test', description: 'billing' }))
    .then([updated({ description: 'billing' })], 'a test key changes its own')
  w([created({ environment: 'test' })])
    .when(update({ sees: null, status: 'disabled' }))
    .then([disabled()], 'a session sees both')
  const failing = [created(), failed('d1', 1), failed('d2', 2), failed('d3', 3), disabled({ reason: 'consecutive_failures', consecutive_failures: 3 })]
  w([...failing, enabled()]).thenState(
    s => [s.endpoints.get('w1')?.status, s.endpoints.get('w1')?.consecutive_failures],
    ['active', 0],
    're-enabling clears the failure count'
  )
  w([...failing, enabled()])
    .when(outcome('d4', false))
    .then([failed('d4', 1)], 'so the next failure is the first again')
})

t.test('DeleteWebhook and DeleteAllWebhooks', async t => {
  const w = spec(t, webhook)
  w([created()]).when(del()).then([deleted()], 'an endpoint is deleted')
  w([created(), deleted()]).when(del()).thenNothing('deleting again is nothing (interface: DELETE is idempotent)')
  w([created()]).when(del('w-of-another-account')).thenNothing("another account's endpoint is left alone")
  w([created()]).when(del('w1', 'test')).thenNothing("a test key leaves a live endpoint alone, as another account's (issue 42 item 10)")
  w([created({ environment: 'test' })])
    .when(del('w1', 'live'))
    .thenNothing('a live key leaves a sandbox endpoint alone')
  w([created({ environment: 'test' })])
    .when(del('w1', 'test'))
    .then([deleted()], 'a test key deletes its own')
  w([]).when(del()).thenNothing('no endpoints: nothing')
  w([createdAs('w1'), createdAs('w2'), createdAs('w3'), deleted({ webhook_uuid: 'w2' })])
    .when({ type: 'DeleteAllWebhooks', data: { now } })
    .then([deleted(), deleted({ webhook_uuid: 'w3' })], 'account deletion deletes each endpoint left')
  w([]).when({ type: 'DeleteAllWebhooks', data: { now } }).thenNothing('no endpoints: nothing to delete')
})

t.test('RecordDeliveryOutcome: consecutive failures disable the endpoint', async t => {
  const w = spec(t, webhook)
  w([created()])
    .when(outcome('d1', false))
    .then([failed('d1', 1)], 'a failed delivery is the first consecutive failure')
  w([created(), failed('d1', 1)])
    .when(outcome('d1', false))
    .thenNothing('the same delivery counts once')
  w([created(), failed('d1', 1)])
    .when(outcome('d2', false))
    .then([failed('d2', 2)], 'below the threshold of 3: counted, still active')
  w([created(), failed('d1', 1), failed('d2', 2)])
    .when(outcome('d3', false))
    .then([failed('d3', 3), disabled({ reason: 'consecutive_failures', consecutive_failures: 3 })], 'the third in a row disables the endpoint automatically')
  w([created(), failed('d1', 1), failed('d2', 2)])
    .when(outcome('d3', true))
    .then([cleared('d3')], 'a success after failures clears the count')
  w([created()]).when(outcome('d2', true)).thenNothing('a success with no failures changes nothing')
  w([created(), failed('d1', 1), cleared('d2')])
    .when(outcome('d2', false))
    .thenNothing('a delivery counted as a success is not counted again')
  w([created(), failed('d1', 1), cleared('d2')])
    .when(outcome('d3', false))
    .then([failed('d3', 1)], 'after a success, failures count from one again')
  w([created(), disabled()])
    .when(outcome('d1', false, 1))
    .then([failed('d1', 1)], 'a disabled endpoint is not disabled again')
  w([created()])
    .when(outcome('d1', false, 3, 'w9'))
    .thenNothing('an endpoint not in this account: nothing')
})

t.test('DisableGone: the receiver answered 410 Gone', async t => {
  const w = spec(t, webhook)
  w([created(), failed('d1', 1)])
    .when(gone())
    .then([disabled({ reason: 'gone', consecutive_failures: 1 })], 'an active endpoint is disabled at once')
  w([created(), disabled()]).when(gone()).thenNothing('a disabled endpoint: nothing')
  w([]).when(gone()).thenNothing('no such endpoint: nothing')
})

t.test('snapshots: the endpoints carried forward', async t => {
  const w = spec(t, webhook)
  const snap = webhook.takeSnapshot(
    [createdAs('w1'), failed('d1', 1), createdAs('w2'), deleted({ webhook_uuid: 'w2' })].reduce(webhook.evolve, webhook.initialState()),
    now
  )
  const { created_at: _, user_uuid: __, ...endpoint } = created().data
  t.same(
    snap,
    snapshotted({ endpoints: [{ ...endpoint, status: 'active', consecutive_failures: 1, counted: ['d1'] }] }),
    'the snapshot holds the endpoints not deleted, with their failure counts'
  )
  w([snap]).when(outcome('d1', false)).thenNothing('counted deliveries carry forward in a snapshot')
  w([snap])
    .when(outcome('d2', false, 2))
    .then([failed('d2', 2), disabled({ reason: 'consecutive_failures', consecutive_failures: 2 })], 'and so does the count')
  w([snap]).when(create('w3', 1)).thenRejects('create_webhook.limit_reached', 403, 'the cap counts what the snapshot carries')
  t.equal(webhook.snapshot.every, webhook.SNAPSHOT_EVERY, 'a snapshot every SNAPSHOT_EVERY events')
})
