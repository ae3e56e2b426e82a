import t from 'tap'
import { createHmac } from 'node:crypto'
import Stripe from 'stripe'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { signatureHeader, verifySignature } from '../../src/lib/webhook-signature.ts'
import { postWebhook } from '../../src/infra/webhooks/sender.ts'
import { isPublicAddress, validateTargetUrl } from '../../src/domain/webhook/target.ts'
import * as webhook from '../../src/domain/webhook/decider.ts'
import * as delivery from '../../src/domain/webhook-delivery/decider.ts'
import { retryDelayMs } from '../../src/commands/webhook-delivery/shared/delivery-policy.ts'
import type { WebhookDeliveryEvent, WebhookEvent } from '../../src/domain/webhook/events.ts'
import { spec } from '../support/decider-spec.ts'

// Our header is Stripe's scheme (t=<ts>,v1=<hex HMAC-SHA256 over "<ts>.<body>">): the
// oracles are node:crypto's HMAC and Stripe's own SDK (generateTestHeaderString signs,
// constructEvent verifies). Agreement with the public vectors beside the checkout is
// npm run eval's.
t.test("our signature is Stripe's scheme: node:crypto and Stripe's SDK agree with it both ways", async t => {
  const stripe = new Stripe('sk_test_unused')
  for (const body of ['{"event":"job.completed"}', '{"name":"Zoë — 東京"}', '', `{"a":"${'x'.repeat(5_000)}"}`]) {
    const ts = 1_700_000_000
    const secret = 'whsec_test_vector_secret'
    const header = signatureHeader(secret, ts, body)
    t.equal(header, `t=${ts},v1=${createHmac('sha256', secret).update(`${ts}.${body}`, 'utf8').digest('hex')}`, `node:crypto: ${body.slice(0, 20)}`)
    t.equal(header, Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: ts }), "Stripe's SDK signs it the same")
    if (body !== '')
      t.doesNotThrow(() => stripe.webhooks.constructEvent(body, signatureHeader(secret, Math.floor(Date.now() / 1000), body), secret), 'and verifies ours')
    t.same(
      verifySignature(Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: ts }), secret, body, ts + 10),
      { ok: true },
      "we verify Stripe's"
    )
  }
})

t.test('verifySignature rejects without throwing', async t => {
  const h = signatureHeader('whsec_x', 1_700_000_000, '{"a":1}')
  t.same(verifySignature(h, 'whsec_x', '{"a":1}', 1_700_000_100), { ok: true })
  t.same(verifySignature(h, 'whsec_x', '{"a":2}', 1_700_000_100), { ok: false, reason: 'mismatch' })
  t.same(verifySignature(h, 'whsec_x', '{"a":1}', 1_700_000_400), { ok: false, reason: 'outside_tolerance' })
  for (const bad of ['', 't=', 'v1=00', 't=abc,v1=zz', ',,,', `t=1,v1=${'g'.repeat(64)}`])
    t.same(verifySignature(bad, 'whsec_x', '{}', 1), { ok: false, reason: 'malformed' }, JSON.stringify(bad))
})

t.test('target URLs: https only and public hosts unless private targets are allowed', async t => {
  const refused = [
    'http://example.com/h',
    'https://127.0.0.1/h',
    'https://10.1.2.3/h',
    'https://192.168.0.1/h',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/h',
    'https://[::ffff:127.0.0.1]/h',
    'https://[fd00::1]/h',
    'https://100.64.0.1/h',
    'https://0.0.0.0/h',
    'https://localhost/h',
    'https://db.internal/h',
    'https://printer.local/h',
    'https://u:p@example.com/h',
    'mailto:a@example.com',
    'not a url',
    'https://2130706433/h',
    'https://localhost./h',
    'https://LOCALHOST/h',
    'https://[::a9fe:a9fe]/h',
    'https://[::]/h'
  ]
  for (const url of refused) t.throws(() => validateTargetUrl('create_webhook', url, false), { code: 'create_webhook.invalid_url' }, url)
  t.equal(validateTargetUrl('create_webhook', 'https://hooks.example.com/in?x=1', false), 'https://hooks.example.com/in?x=1')
  t.equal(validateTargetUrl('create_webhook', 'https://93.184.215.14:8443/h', false), 'https://93.184.215.14:8443/h')
  t.equal(validateTargetUrl('create_webhook', 'http://127.0.0.1:9000/h', true), 'http://127.0.0.1:9000/h')
  t.throws(() => validateTargetUrl('create_webhook', 'ftp://127.0.0.1/h', true), { code: 'create_webhook.invalid_url' })
  t.equal(isPublicAddress('8.8.8.8'), true)
  t.equal(isPublicAddress('2001:4860:4860::8888'), true)
  t.equal(isPublicAddress('::ffff:10.0.0.1'), false)
  t.equal(isPublicAddress('::a9fe:a9fe'), false)
})

t.test('the sender refuses names that resolve to private addresses, and times out', async t => {
  let served = 0
  const server = createServer((req, res) => {
    served++
    if (req.url === '/slow') return
    res.end('ok')
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const port = (server.address() as AddressInfo).port
  const viaName = await postWebhook(`http://localhost:${port}/h`, '{}', {}, { timeout_ms: 2_000, allow_private: false })
  // The same answer as any host that cannot be reached: it tells nothing of which internal names exist.
  t.match(viaName, { status: null, error: 'could not connect to the endpoint' }, 'localhost resolves to loopback: refused at connect time')
  t.match(await postWebhook(`http://127.0.0.1:${port}/h`, '{}', {}, { timeout_ms: 2_000, allow_private: false }), { status: null, error: /not public/ })
  t.match(await postWebhook(`http://localhost:${port}/h`, '{}', {}, { timeout_ms: 2_000, allow_private: true }), { status: 200, error: null })
  t.equal(served, 1, 'only the allowed request reached the server (the refused ones never connected)')
  // Host names made of hex letters are names, not IP literals: looked up, not refused outright.
  const hexName = await postWebhook('https://feed.cafe/h', '{}', {}, { timeout_ms: 1_000, allow_private: false })
  t.notMatch(hexName.error ?? '', /not public/, 'feed.cafe goes to DNS (which fails offline), it is not refused as an address')
  t.match(await postWebhook(`http://127.0.0.1:${port}/slow`, '{}', {}, { timeout_ms: 200, allow_private: true }), {
    status: null,
    error: /no response within 200 ms/
  })
})

t.test('retry schedule: exponential ×4 from the base, bounded jitter', async t => {
  const policy = { max_attempts: 6, retry_base_ms: 30_000, disable_after_failures: 5 }
  t.same(
    [2, 3, 4, 5, 6].map(n => retryDelayMs(policy, n, () => 0)),
    [30_000, 120_000, 480_000, 1_920_000, 7_680_000]
  )
  t.equal(
    retryDelayMs(policy, 2, () => 0.999),
    Math.round(30_000 * 1.0999)
  )
})

const now = '2026-11-22T10:00:00.000Z'
const created: WebhookEvent = {
  type: 'WebhookEndpointCreated',
  data: { webhook_uuid: 'w1', user_uuid: 'u1', url: 'https://h.example/x', events: ['job.completed'], description: null, secret: 'sealed', created_at: now }
}
const failed = (d: string, n: number): WebhookEvent => ({
  type: 'WebhookDeliveryFailureCounted',
  data: { webhook_uuid: 'w1', user_uuid: 'u1', delivery_uuid: d, consecutive_failures: n }
})

t.test('webhook endpoint decider', async t => {
  const w = spec(t, webhook)
  const outcome = (d: string, succeeded: boolean) => ({
    type: 'RecordDeliveryOutcome' as const,
    data: { webhook_uuid: 'w1', delivery_uuid: d, succeeded, disable_after: 2, now }
  })
  w([created])
    .when(outcome('d1', false))
    .then([failed('d1', 1)])
  w([created, failed('d1', 1)])
    .when(outcome('d1', false))
    .then([], 'the same delivery counts once')
  w([created, failed('d1', 1)])
    .when(outcome('d2', false))
    .then([
      failed('d2', 2),
      {
        type: 'WebhookEndpointDisabled',
        data: { webhook_uuid: 'w1', user_uuid: 'u1', reason: 'consecutive_failures', consecutive_failures: 2, disabled_at: now }
      }
    ])
  w([created, failed('d1', 1)])
    .when(outcome('d2', true))
    .then([{ type: 'WebhookDeliveryFailuresCleared', data: { webhook_uuid: 'w1', user_uuid: 'u1', delivery_uuid: 'd2' } }])
  w([created]).when(outcome('d2', true)).then([], 'a success with no failures changes nothing')
  w([created])
    .when({ type: 'UpdateWebhook', data: { webhook_uuid: 'w-of-another-account', sees: null, description: 'x', now } })
    .thenThrows('update_webhook.not_found', "not in this account's stream")
  w([created])
    .when({ type: 'UpdateWebhook', data: { webhook_uuid: 'w1', sees: null, url: 'https://h.example/x', events: ['job.completed'], now } })
    .then([], 'no change, no event')
  w([created])
    .when({ type: 'DeleteWebhook', data: { webhook_uuid: 'w-of-another-account', sees: null, now } })
    .then([], "another account's endpoint is left alone")
  w([])
    .when({ type: 'DeleteWebhook', data: { webhook_uuid: 'w1', sees: null, now } })
    .then([])
  w([created])
    .when({ type: 'CreateWebhook', data: { ...(created.data as any), max_endpoints: 2 } })
    .thenThrows('create_webhook.exists')
  const second: WebhookEvent = { type: 'WebhookEndpointCreated', data: { ...(created.data as any), webhook_uuid: 'w2' } }
  w([created, second])
    .when({ type: 'CreateWebhook', data: { ...(created.data as any), webhook_uuid: 'w3', max_endpoints: 2 } })
    .thenThrows('create_webhook.limit_reached')
  const deleted: WebhookEvent = { type: 'WebhookEndpointDeleted', data: { webhook_uuid: 'w1', user_uuid: 'u1', deleted_at: now } }
  w([created, second, deleted])
    .when({ type: 'CreateWebhook', data: { ...(created.data as any), webhook_uuid: 'w3', max_endpoints: 2 } })
    .then([{ type: 'WebhookEndpointCreated', data: { ...(created.data as any), webhook_uuid: 'w3' } }], 'a deleted endpoint frees its place')
  const snap = webhook.takeSnapshot([created, failed('d1', 1)].reduce(webhook.evolve, webhook.initialState()), now)
  w([snap]).when(outcome('d1', false)).then([], 'counted deliveries carry forward in a snapshot')
})

t.test('delivery decider: every command idempotent', async t => {
  const d = spec(t, delivery)
  const requested: WebhookDeliveryEvent = {
    type: 'WebhookDeliveryRequested',
    data: {
      delivery_uuid: 'd1',
      webhook_uuid: 'w1',
      user_uuid: 'u1',
      event: 'job.completed',
      job_uuid: 'j1',
      status: 'completed',
      timestamp: 1,
      test: false,
      requested_at: now
    }
  }
  const attempt = (n: number, succeeded: boolean, next: string | null) => ({
    attempt: n,
    response_status: succeeded ? 200 : 500,
    error: null,
    duration_ms: 5,
    succeeded,
    attempted_at: now,
    next_attempt_at: next
  })
  const attempted = (n: number, succeeded: boolean, next: string | null): WebhookDeliveryEvent => ({
    type: 'WebhookDeliveryAttempted',
    data: { delivery_uuid: 'd1', webhook_uuid: 'w1', user_uuid: 'u1', event: 'job.completed', job_uuid: 'j1', test: false, ...attempt(n, succeeded, next) }
  })
  d([requested])
    .when({ type: 'RequestDelivery', data: requested.data as any })
    .then([], 'requested once')
  d([requested])
    .when({ type: 'AttemptDelivery', data: attempt(1, false, now) })
    .then([attempted(1, false, now)])
  d([requested, attempted(1, false, now)])
    .when({ type: 'AttemptDelivery', data: attempt(1, false, now) })
    .then([], 'an attempt is recorded once')
  d([requested, attempted(1, true, null)])
    .when({ type: 'AttemptDelivery', data: attempt(2, true, null) })
    .then([], 'nothing after success')
  d([requested, attempted(1, false, null)])
    .when({ type: 'AbandonDelivery', data: { reason: 'endpoint_deleted', now } })
    .then([], 'a failed delivery is over')
  d([requested])
    .when({ type: 'AbandonDelivery', data: { reason: 'endpoint_disabled', now } })
    .then([
      { type: 'WebhookDeliveryAbandoned', data: { delivery_uuid: 'd1', webhook_uuid: 'w1', user_uuid: 'u1', reason: 'endpoint_disabled', abandoned_at: now } }
    ])
})
