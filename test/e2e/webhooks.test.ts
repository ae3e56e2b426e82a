import t from 'tap'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { client, settled, signUp, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { createHmac } from 'node:crypto'

/** Whether `header` signs `body` with `secret` (`t=<s>,v1=<HMAC-SHA256 hex of "<t>.<body>">`, docs/interface.md §6), recomputed with node:crypto. */
function signedWith(header: string, secret: string, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)
  return m !== null && m[2] === createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex') && Math.abs(Number(m[1]) - Date.now() / 1000) < 300
}

// A receiver on loopback: every POST is recorded; `respond` scripts the status per path.
interface Received {
  path: string
  headers: IncomingMessage['headers']
  body: string
}
const received: Received[] = []
const respond = new Map<string, number[]>()
const receiver = createServer((req, res) => {
  let body = ''
  req.on('data', c => {
    body += c
  })
  req.on('end', () => {
    received.push({ path: req.url ?? '', headers: req.headers, body })
    const script = respond.get(req.url ?? '') ?? []
    res.statusCode = script.length > 1 ? script.shift()! : (script[0] ?? 200)
    res.end('ok')
  })
})
await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => {
  receiver.close()
})
const hookUrl = (path: string): string => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${path}`
const to = (path: string): Received[] => received.filter(r => r.path === path)

const dataDir = t.testdir()
const service = await startTestService(
  testConfig(dataDir, {
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_BASE_MS: '50',
    WEBHOOK_MAX_ATTEMPTS: '3',
    WEBHOOK_DISABLE_AFTER_FAILURES: '2',
    WEBHOOK_TIMEOUT_MS: '2000'
  })
)
t.teardown(() => service.close())
const api = client(service.url)
const token = await signUp(api, dataDir, 'hooks-owner@example.com')
const other = await signUp(api, dataDir, 'hooks-other@example.com')
const unknownUuid = '01a200f4-4e74-7104-92f0-217355e415da'
const sandboxKey = (await api('POST', '/api/keys', { token, body: { name: 'sandbox', environment: 'test' } })).body.raw_key as string
// The jobs here are the sandbox's (no network): an endpoint hears of them when a test key made it (issue 42 item 10).
const sandboxHooks = (
  await api('POST', '/api/keys', {
    token,
    body: { name: 'sandbox hooks', environment: 'test', scopes: ['webhooks:read', 'webhooks:create', 'webhooks:update', 'webhooks:delete'] }
  })
).body.raw_key as string
const verify = async (email: string): Promise<string> => {
  const r = await api('POST', '/api/verify', { token: sandboxKey, body: { email } })
  if (r.status !== 202) throw new Error(`verify: ${r.status}`)
  await settled(api, sandboxKey, r.body.uuid)
  return r.body.uuid
}
const deleteAll = async (tok: string): Promise<void> => {
  for (const w of (await api('GET', '/api/webhooks', { token: tok })).body) await api('DELETE', `/api/webhooks/${w.uuid}`, { token: tok })
}

t.test('a completed job is delivered once, signed, to each subscribed endpoint, without the address', async t => {
  const created = await api('POST', '/api/webhooks', { token: sandboxHooks, body: { url: hookUrl('/a'), events: ['job.completed'], description: 'CRM' } })
  t.equal(created.status, 201)
  t.match(created.body, { url: hookUrl('/a'), events: ['job.completed'], description: 'CRM', status: 'active', consecutive_failures: 0 })
  t.match(created.body.secret, /^whsec_[A-Za-z0-9_-]{43}$/)
  const secret = created.body.secret as string
  const job = await verify('private-person@example.org')
  await waitUntil(() => to('/a').length >= 1)
  // Positive control: a later job's delivery to the same endpoint has arrived.
  const later = await verify('another-person@example.org')
  await waitUntil(() => to('/a').some(r => r.body.includes(later)))
  const got = to('/a').filter(r => r.body.includes(job))
  t.equal(got.length, 1, 'delivered once')
  const body = JSON.parse(got[0].body)
  t.same(Object.keys(body).sort(), ['event', 'job_uuid', 'status', 'timestamp'])
  t.match(body, { event: 'job.completed', job_uuid: job, status: 'completed' })
  t.ok(Number.isInteger(body.timestamp) && Math.abs(body.timestamp - Date.now() / 1000) < 60, 'timestamp in Unix seconds')
  t.notOk(got[0].body.includes('@'), 'no raw email in the body')
  const header = got[0].headers['x-service-signature'] as string
  t.match(header, /^t=\d+,v1=[0-9a-f]{64}$/)
  // The oracle is the interface's rule recomputed with node:crypto: HMAC-SHA256 over `<t>.<raw body>` with the endpoint secret.
  const [, ts, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!
  t.equal(v1, createHmac('sha256', secret).update(`${ts}.${got[0].body}`).digest('hex'), 'v1 is the HMAC of t.body with the secret')
  t.not(v1, createHmac('sha256', 'whsec_wrong').update(`${ts}.${got[0].body}`).digest('hex'), 'another secret gives another signature')
  t.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60, 't is now, in Unix seconds')
  t.equal(got[0].headers['content-type'], 'application/json')
  t.match(got[0].headers['x-service-delivery'], /^[0-9a-f-]{36}$/)

  // A delivery is recorded once its answer came back: the receiver may have the control's request a moment before the record is read.
  let deliveries = await api('GET', `/api/webhooks/${created.body.uuid}/deliveries`, { token })
  await waitUntil(async () => {
    deliveries = await api('GET', `/api/webhooks/${created.body.uuid}/deliveries`, { token })
    return deliveries.body.total >= 2
  })
  t.equal(deliveries.status, 200)
  t.match(deliveries.body, { total: 2, limit: 20, offset: 0 }, "the job's delivery and the control's")
  t.same(deliveries.body.items.filter((d: any) => d.job_uuid === job).length, 1)
  t.match(
    deliveries.body.items.find((d: any) => d.job_uuid === job),
    { event: 'job.completed', job_uuid: job, response_status: 200, succeeded: true, attempt: 1, test: false, timestamp: String }
  )
  const events = (await service.core.store.readAll({ from_position: 0, max_count: 100_000 })).filter(e => e.type === 'WebhookEndpointCreated')
  t.notOk(JSON.stringify(events).includes(secret), 'the signing secret is sealed in the event')
  await deleteAll(token)
})

t.test('a failed attempt is retried with back-off until one succeeds', async t => {
  respond.set('/flaky', [500, 503, 200])
  const w = (await api('POST', '/api/webhooks', { token: sandboxHooks, body: { url: hookUrl('/flaky'), events: ['job.completed'] } })).body
  const job = await verify('retry-me@example.org')
  await waitUntil(async () => (await api('GET', `/api/webhooks/${w.uuid}/deliveries`, { token })).body.total === 3)
  const list = (await api('GET', `/api/webhooks/${w.uuid}/deliveries`, { token })).body.items
  t.same(
    list.map((a: any) => [a.attempt, a.response_status, a.succeeded]),
    [
      [3, 200, true],
      [2, 503, false],
      [1, 500, false]
    ],
    'newest first'
  )
  t.ok(list.every((a: any) => a.job_uuid === job))
  const w2 = w as { secret: string }
  t.ok(
    to('/flaky').every(r => signedWith(r.headers['x-service-signature'] as string, w2.secret, r.body)),
    'every attempt is signed, with the time it was sent'
  )
  t.same(
    to('/flaky').map(r => r.headers['x-service-attempt']),
    ['1', '2', '3']
  )
  t.equal(new Set(to('/flaky').map(r => r.headers['x-service-delivery'])).size, 1, 'one delivery id across attempts')
  t.equal((await api('GET', `/api/webhooks/${w.uuid}`, { token })).body.status, 'active')
  await deleteAll(token)
})

t.test('repeated failed deliveries disable the endpoint; re-enabling clears the count', async t => {
  respond.set('/down', [500])
  const w = (await api('POST', '/api/webhooks', { token: sandboxHooks, body: { url: hookUrl('/down'), events: ['job.completed'] } })).body
  await verify('first@example.org')
  await waitUntil(async () => (await api('GET', `/api/webhooks/${w.uuid}`, { token })).body.consecutive_failures === 1)
  t.equal((await api('GET', `/api/webhooks/${w.uuid}`, { token })).body.status, 'active', 'one failed delivery is not enough')
  await verify('second@example.org')
  await waitUntil(async () => (await api('GET', `/api/webhooks/${w.uuid}`, { token })).body.status === 'disabled')
  const disabled = (await api('GET', `/api/webhooks/${w.uuid}`, { token })).body
  t.match(disabled, { status: 'disabled', disabled_reason: 'consecutive_failures', consecutive_failures: 2 })
  t.equal(to('/down').length, 6, 'three attempts per delivery')
  // Positive control: an active endpoint subscribed to the same kind receives the next job.
  const witness = (await api('POST', '/api/webhooks', { token: sandboxHooks, body: { url: hookUrl('/witness'), events: ['job.completed'] } })).body
  const third = await verify('third@example.org')
  await waitUntil(() => to('/witness').some(r => r.body.includes(third)))
  t.equal(to('/down').length, 6, 'a disabled endpoint receives nothing')
  await api('DELETE', `/api/webhooks/${witness.uuid}`, { token })
  const test = await api('POST', `/api/webhooks/${w.uuid}/test`, { token })
  t.equal(test.status, 200, 'a disabled endpoint can still be tested')
  t.match(test.body, { delivered: false, response_status: 500 })
  respond.set('/down', [204])
  const enabled = await api('PATCH', `/api/webhooks/${w.uuid}`, { token, body: { status: 'active' } })
  t.match(enabled.body, { status: 'active', disabled_reason: null, consecutive_failures: 0 })
  await verify('fourth@example.org')
  await waitUntil(() => to('/down').length === 8)
  t.equal(to('/down')[7].headers['x-service-event'], 'job.completed')
  await deleteAll(token)
})

t.test('POST /api/webhooks/{uuid}/test: one signed sample, recorded like a real attempt', async t => {
  const w = (await api('POST', '/api/webhooks', { token, body: { url: hookUrl('/sample'), events: ['job.completed'] } })).body
  const r = await api('POST', `/api/webhooks/${w.uuid}/test`, { token })
  t.equal(r.status, 200)
  t.match(r.body, { delivered: true, response_status: 200, error: null, delivery_uuid: String })
  t.equal(to('/sample').length, 1)
  t.ok(signedWith(to('/sample')[0].headers['x-service-signature'] as string, w.secret, to('/sample')[0].body), 'the sample is signed')
  const list = (await api('GET', `/api/webhooks/${w.uuid}/deliveries`, { token })).body
  t.match(list.items, [{ test: true, response_status: 200, event: 'job.completed' }])
  respond.set('/sample', [500])
  for (let i = 0; i < 3; i++) t.match((await api('POST', `/api/webhooks/${w.uuid}/test`, { token })).body, { delivered: false, response_status: 500 })
  t.match((await api('GET', `/api/webhooks/${w.uuid}`, { token })).body, { status: 'active', consecutive_failures: 0 }, 'tests do not count towards disabling')
  const closed = (await api('POST', '/api/webhooks', { token, body: { url: 'http://127.0.0.1:9/nothing-listens', events: ['job.completed'] } })).body
  const refused = await api('POST', `/api/webhooks/${closed.uuid}/test`, { token })
  t.equal(refused.status, 200)
  t.match(refused.body, { delivered: false, response_status: null, error: 'could not connect to the endpoint' })
  // A name that does not exist answers the same as a refused connection: a test-fire tells nothing of which hosts exist.
  t.equal((await api('PATCH', `/api/webhooks/${closed.uuid}`, { token, body: { url: 'http://no-such-host.invalid/x' } })).status, 200)
  t.match((await api('POST', `/api/webhooks/${closed.uuid}/test`, { token })).body, {
    delivered: false,
    response_status: null,
    error: 'could not connect to the endpoint'
  })
  t.equal((await api('POST', `/api/webhooks/${unknownUuid}/test`, { token })).status, 404)
  t.equal((await api('POST', `/api/webhooks/${w.uuid}/test`, { token: other })).status, 404, "another account's endpoint")
  t.equal((await api('POST', '/api/webhooks/nope/test', { token })).status, 400)
  t.equal((await api('POST', `/api/webhooks/${w.uuid}/test`)).status, 401)
  t.equal((await api('POST', `/api/webhooks/${w.uuid}/test`, { token: sandboxKey })).status, 403, 'missing webhooks:update')
  await deleteAll(token)
})

t.test('create: 400 invalid url, events or empty events; 401; 403 plan limit or missing scope', async t => {
  const cases: Array<[unknown, string]> = [
    [{ url: 'ftp://example.com/x', events: ['job.completed'] }, 'create_webhook.invalid_url'],
    [{ url: '/relative', events: ['job.completed'] }, 'create_webhook.invalid_url'],
    [{ url: 'http://user:pw@example.com/x', events: ['job.completed'] }, 'create_webhook.invalid_url'],
    [{ url: `https://example.com/${'x'.repeat(2100)}`, events: ['job.completed'] }, 'create_webhook.invalid_url'],
    [{ url: hookUrl('/x'), events: [] }, 'create_webhook.empty_events'],
    [{ url: hookUrl('/x'), events: ['job.exploded'] }, 'create_webhook.invalid_events'],
    [{ url: hookUrl('/x'), events: ['job.completed'], description: 'd'.repeat(501) }, 'create_webhook.invalid_description'],
    [{ url: hookUrl('/x') }, 'create_webhook.invalid_request'],
    [{ url: hookUrl('/x'), events: 'job.completed' }, 'create_webhook.invalid_request'],
    [{ url: hookUrl('/x'), events: ['job.completed'], secret: 'mine' }, 'create_webhook.invalid_request'],
    [null, 'create_webhook.invalid_request']
  ]
  for (const [body, code] of cases) {
    const r = await api('POST', '/api/webhooks', { token, body })
    t.equal(r.status, 400, JSON.stringify(body)?.slice(0, 80))
    t.equal(r.body.code, code)
  }
  t.equal((await api('GET', '/api/webhooks', { token })).body.length, 0, 'nothing was created')
  t.equal((await api('POST', '/api/webhooks', { body: { url: hookUrl('/x'), events: ['job.completed'] } })).status, 401)
  const denied = await api('POST', '/api/webhooks', { token: sandboxKey, body: { url: hookUrl('/x'), events: ['job.completed'] } })
  t.equal(denied.status, 403, 'a key without webhooks:create')
  t.equal(denied.body.code, 'auth.missing_scope')
  const manager = (
    await api('POST', '/api/keys', {
      token,
      body: { name: 'hooks', environment: 'live', scopes: ['webhooks:read', 'webhooks:create', 'webhooks:update', 'webhooks:delete'] }
    })
  ).body.raw_key
  const max = (await api('GET', '/api/config')).body.plans[0].limits.webhooks
  for (let i = 0; i < max; i++)
    t.equal(
      (await api('POST', '/api/webhooks', { token: manager, body: { url: hookUrl(`/cap${i}`), events: ['job.completed'] } })).status,
      201,
      'a key with the scopes manages endpoints'
    )
  const over = await api('POST', '/api/webhooks', { token, body: { url: hookUrl('/over'), events: ['job.completed'] } })
  t.equal(over.status, 403)
  t.equal(over.body.code, 'create_webhook.limit_reached')
  await deleteAll(token)
  t.equal(
    (await api('POST', '/api/webhooks', { token, body: { url: hookUrl('/after'), events: ['job.completed'] } })).status,
    201,
    'deleted endpoints do not count'
  )
  await deleteAll(token)
})

t.test('list, get, patch, delete: scopes, ownership, 400/401/403/404, idempotent delete', async t => {
  const a = (await api('POST', '/api/webhooks', { token, body: { url: hookUrl('/one'), events: ['job.completed'] } })).body
  const b = (await api('POST', '/api/webhooks', { token, body: { url: hookUrl('/two'), events: ['job.completed'] } })).body
  const theirs = (await api('POST', '/api/webhooks', { token: other, body: { url: hookUrl('/theirs'), events: ['job.completed'] } })).body
  const list = await api('GET', '/api/webhooks', { token })
  t.equal(list.status, 200)
  t.same(
    list.body.map((w: any) => w.uuid),
    [b.uuid, a.uuid],
    "newest first, only the caller's"
  )
  t.notOk(
    list.body.some((w: any) => 'secret' in w),
    'the secret is never shown again'
  )
  t.equal((await api('GET', '/api/webhooks')).status, 401)
  t.equal((await api('GET', '/api/webhooks', { token: sandboxKey })).status, 403, 'missing webhooks:read')

  t.equal((await api('GET', `/api/webhooks/${a.uuid}`, { token })).body.url, hookUrl('/one'))
  t.equal((await api('GET', `/api/webhooks/${theirs.uuid}`, { token })).status, 404)
  t.equal((await api('GET', `/api/webhooks/${unknownUuid}`, { token })).status, 404)
  t.equal((await api('GET', '/api/webhooks/xyz', { token })).status, 400)
  t.equal((await api('GET', `/api/webhooks/${a.uuid}`)).status, 401)
  t.equal((await api('GET', `/api/webhooks/${a.uuid}`, { token: sandboxKey })).status, 403)

  const patched = await api('PATCH', `/api/webhooks/${a.uuid}`, { token, body: { url: hookUrl('/one-b'), description: 'moved' } })
  t.equal(patched.status, 200)
  t.match(patched.body, { url: hookUrl('/one-b'), description: 'moved', events: ['job.completed'], status: 'active' })
  const off = await api('PATCH', `/api/webhooks/${a.uuid}`, { token, body: { status: 'disabled' } })
  t.match(off.body, { status: 'disabled', disabled_reason: 'requested', url: hookUrl('/one-b') })
  t.equal((await api('PATCH', `/api/webhooks/${a.uuid}`, { token, body: { description: null } })).body.description, null)
  const bad: Array<[unknown, string]> = [
    [{ status: 'paused' }, 'update_webhook.invalid_status'],
    [{ events: [] }, 'update_webhook.empty_events'],
    [{ events: ['nope'] }, 'update_webhook.invalid_events'],
    [{ url: 'gopher://x' }, 'update_webhook.invalid_url'],
    [{ colour: 'red' }, 'update_webhook.invalid_request']
  ]
  for (const [body, code] of bad) {
    const r = await api('PATCH', `/api/webhooks/${a.uuid}`, { token, body })
    t.equal(r.status, 400, JSON.stringify(body))
    t.equal(r.body.code, code)
  }
  t.equal((await api('PATCH', `/api/webhooks/${theirs.uuid}`, { token, body: { description: 'mine now' } })).status, 404)
  t.equal((await api('GET', `/api/webhooks/${theirs.uuid}`, { token: other })).body.description, null, 'untouched')
  t.equal((await api('PATCH', `/api/webhooks/${unknownUuid}`, { token, body: { description: 'x' } })).status, 404)
  t.equal((await api('PATCH', '/api/webhooks/xyz', { token, body: {} })).status, 400)
  t.equal((await api('PATCH', `/api/webhooks/${a.uuid}`, { body: {} })).status, 401)
  t.equal((await api('PATCH', `/api/webhooks/${a.uuid}`, { token: sandboxKey, body: {} })).status, 403)

  t.equal((await api('GET', `/api/webhooks/${a.uuid}/deliveries`, { token })).body.total, 0)
  t.equal((await api('GET', `/api/webhooks/${theirs.uuid}/deliveries`, { token })).status, 404)
  t.equal((await api('GET', `/api/webhooks/${unknownUuid}/deliveries`, { token })).status, 404)
  t.equal((await api('GET', '/api/webhooks/xyz/deliveries', { token })).status, 400)
  t.equal((await api('GET', `/api/webhooks/${a.uuid}/deliveries?limit=0`, { token })).status, 400)
  t.equal((await api('GET', `/api/webhooks/${a.uuid}/deliveries`)).status, 401)
  t.equal((await api('GET', `/api/webhooks/${a.uuid}/deliveries`, { token: sandboxKey })).status, 403)

  t.equal((await api('DELETE', `/api/webhooks/${theirs.uuid}`, { token })).status, 204, "another account's: 204 and nothing happens")
  t.equal((await api('GET', `/api/webhooks/${theirs.uuid}`, { token: other })).status, 200)
  t.equal((await api('DELETE', `/api/webhooks/${a.uuid}`, { token: sandboxKey })).status, 403)
  t.equal((await api('DELETE', `/api/webhooks/${a.uuid}`)).status, 401)
  t.equal((await api('DELETE', '/api/webhooks/xyz', { token })).status, 400)
  t.equal((await api('DELETE', `/api/webhooks/${a.uuid}`, { token })).status, 204)
  t.equal((await api('DELETE', `/api/webhooks/${a.uuid}`, { token })).status, 204, 'idempotent')
  t.equal((await api('DELETE', `/api/webhooks/${unknownUuid}`, { token })).status, 204)
  t.equal((await api('GET', `/api/webhooks/${a.uuid}`, { token })).status, 404)
  const owner = (await api('GET', '/api/users/me', { token })).body.uuid
  const events = (await service.core.store.readStream(`webhooks-${owner}`)).filter(e => e.data.webhook_uuid === a.uuid).map(e => e.type)
  t.equal(events.filter(e => e === 'WebhookEndpointDeleted').length, 1, 'one deletion event')
  await deleteAll(token)
  await deleteAll(other)
})

t.test("a retry whose timer fires before it is due by the commands' clock is held again, not dropped", async t => {
  // The service's clock runs 400 ms behind the timers' (nodejs/node#26578: a timer may fire
  // a little early by the clock a command reads): every retry is redelivered before the
  // command finds it due. The oracle: the receiver's own record of the attempts.
  const dir = t.testdir()
  const config = testConfig(dir, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '300', WEBHOOK_MAX_ATTEMPTS: '3' })
  const service = await startTestService(config)
  t.teardown(() => service.close())
  service.core.ctx.now = () => new Date(Date.now() - 400)
  const api = client(service.url)
  const tok = await signUp(api, dir, 'early-timer@example.com')
  const key = (await api('POST', '/api/keys', { token: tok, body: { name: 's', environment: 'test', scopes: ['email:verify:single', 'webhooks:create'] } }))
    .body.raw_key
  respond.set('/early-timer', [500, 200])
  await api('POST', '/api/webhooks', { token: key, body: { url: hookUrl('/early-timer'), events: ['job.completed'] } })
  const job = (await api('POST', '/api/verify', { token: key, body: { email: 'valid@example.org' } })).body.uuid
  await waitUntil(() => to('/early-timer').length === 2, 10_000)
  t.same(
    to('/early-timer').map(r => [r.headers['x-service-attempt'], r.body.includes(job)]),
    [
      ['1', true],
      ['2', true]
    ],
    'the second attempt was made'
  )
})

t.test('in-process bus: a retry that was waiting when the service stopped is made after a restart', async t => {
  const dir = t.testdir()
  const config = testConfig(dir, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '1500', WEBHOOK_MAX_ATTEMPTS: '3' })
  const first = await startTestService(config)
  const a = client(first.url)
  const tok = await signUp(a, dir, 'restart@example.com')
  const key = (await a('POST', '/api/keys', { token: tok, body: { name: 's', environment: 'test', scopes: ['email:verify:single', 'webhooks:create'] } })).body
    .raw_key
  respond.set('/restart', [500, 200])
  const w = (await a('POST', '/api/webhooks', { token: key, body: { url: hookUrl('/restart'), events: ['job.completed'] } })).body
  const job = (await a('POST', '/api/verify', { token: key, body: { email: 'valid@example.org' } })).body.uuid
  await waitUntil(() => to('/restart').length === 1)
  await waitUntil(async () => (await a('GET', `/api/webhooks/${w.uuid}/deliveries`, { token: tok })).body.total === 1)
  await first.close()
  t.equal(to('/restart').length, 1, 'the retry had not been made when the service stopped')

  const second = await startTestService(config)
  t.teardown(() => second.close())
  const b = client(second.url)
  await waitUntil(() => to('/restart').length === 2, 10_000)
  await waitUntil(async () => (await b('GET', `/api/webhooks/${w.uuid}/deliveries`, { token: tok })).body.total === 2)
  const list = (await b('GET', `/api/webhooks/${w.uuid}/deliveries`, { token: tok })).body.items
  t.same(
    list.map((x: any) => [x.attempt, x.response_status, x.job_uuid]),
    [
      [2, 200, job],
      [1, 500, job]
    ]
  )
  // Positive control: a later job's delivery to the same endpoint has arrived.
  const later = (await b('POST', '/api/verify', { token: key, body: { email: 'valid2@example.org' } })).body.uuid
  await waitUntil(() => to('/restart').some(r => r.body.includes(later)), 10_000)
  t.equal(to('/restart').filter(r => r.body.includes(job)).length, 2, 'and only once')
})
