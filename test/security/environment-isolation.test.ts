import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { client, signUp } from '../support/service.ts'
import { npmStartNodeFlags, startSvc, svcEnv } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// A credential reads and changes only its own environment's data (issue 42, item 10): a
// `svc_test_` key listed live batches, read live results (addresses) and jobs. Now a test
// key sees the sandbox's jobs, batches, results, kept files and usage only, a live key
// the live ones, and another environment's is "not found" as another account's is; a
// session (the console) sees both, each marked, and may name one. The service runs as
// `npm start` runs it. Jobs and batches run the syntax check only (no network); the
// resolver it is given does not answer (127.0.142.1: this file owns 127.0.142.0/24), and
// webhooks go to a receiver of this test's on 127.0.142.2, one at a time in order
// (WEBHOOK_CONCURRENCY=1), so a delivery sent last is a positive control for the ones
// before it. The oracles: what this test submitted (uuids, addresses, counts), read back
// over HTTP, and what the receiver got.
const dataDir = t.testdir()
const svc = await startSvc(
  t,
  ['serve'],
  svcEnv(dataDir, { VERIFIER_DNS_SERVERS: '127.0.142.1:53', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_CONCURRENCY: '1' }),
  npmStartNodeFlags()
)
const api = client(svc.url)
const session = await signUp(api, dataDir, 'two-environments@example.com')
const SCOPES = [
  'email:verify:single',
  'email:verify:bulk',
  'results:read',
  'usage:read',
  'billing:read',
  'webhooks:read',
  'webhooks:create',
  'webhooks:update',
  'webhooks:delete'
]
const keyOf = async (environment: 'live' | 'test'): Promise<string> =>
  (await api('POST', '/api/keys', { token: session, body: { name: `${environment} integration`, environment, scopes: SCOPES } })).body.raw_key
const live = await keyOf('live')
const test = await keyOf('test')

/** A job of `key` on the syntax check alone, once it has ended. */
async function jobBy(key: string, email: string): Promise<string> {
  const r = await api('POST', '/api/verify', { token: key, body: { email, checks: ['syntax'] } })
  if (r.status !== 202) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`)
  await waitUntil(async () => (await api('GET', `/api/verify/${r.body.uuid}?wait=5`, { token: key })).body.status === 'completed', 20_000)
  return r.body.uuid
}
/** A batch of `key` on the syntax check alone, once it has completed, with a CSV kept beside it. */
async function batchBy(key: string, emails: string[]): Promise<string> {
  const r = await api('POST', '/api/batches', { token: key, body: { emails, checks: ['syntax'], final: true } })
  if (r.status !== 202) throw new Error(`batch: ${r.status} ${JSON.stringify(r.body)}`)
  await waitUntil(async () => (await api('GET', `/api/batches/${r.body.uuid}?wait=5`, { token: key })).body.status === 'completed', 20_000)
  const up = await putSource(key, r.body.uuid, `email\n${emails.join('\n')}\n`)
  if (up !== 201) throw new Error(`source: ${up}`)
  return r.body.uuid
}
async function putSource(key: string, batch: string, csv: string): Promise<number> {
  const r = await fetch(`${svc.url}/api/batches/${batch}/source?name=list.csv`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
    body: csv
  })
  await r.arrayBuffer()
  return r.status
}
const getSource = async (key: string, batch: string): Promise<{ status: number; text: string }> => {
  const r = await fetch(`${svc.url}/api/batches/${batch}/source`, { headers: { authorization: `Bearer ${key}` } })
  return { status: r.status, text: await r.text() }
}

const liveJob = await jobBy(live, 'customer@live-world.example.com')
const testJob = await jobBy(test, 'someone@sandbox.example.com')
const liveBatch = await batchBy(live, ['first@live-world.example.com', 'second@live-world.example.com', 'third@live-world.example.com'])
const testBatch = await batchBy(test, ['a@sandbox.example.com', 'b@sandbox.example.com'])

t.test('jobs: a test key lists and reads the sandbox only, a live key the live ones, a session both', async t => {
  const listed = async (token: string, query = ''): Promise<{ uuids: string[]; total: number }> => {
    const r = await api('GET', `/api/jobs${query}`, { token })
    t.equal(r.status, 200, `GET /api/jobs${query}`)
    return { uuids: r.body.items.map((j: { uuid: string }) => j.uuid), total: r.body.total }
  }
  t.same(await listed(session), { uuids: [testJob, liveJob], total: 2 }, 'the session lists both (positive control)')
  t.same(await listed(test), { uuids: [testJob], total: 1 }, 'the test key: its sandbox job only, and a total of one')
  t.same(await listed(live), { uuids: [liveJob], total: 1 }, 'the live key: the live job only')
  t.same(await listed(session, '?environment=test'), { uuids: [testJob], total: 1 }, 'the session naming test')
  t.same(await listed(session, '?environment=live'), { uuids: [liveJob], total: 1 }, 'the session naming live')
  t.same(await listed(test, '?environment=test'), { uuids: [testJob], total: 1 }, 'a key may name its own environment')
  const other = await api('GET', '/api/jobs?environment=live', { token: test })
  t.same([other.status, other.body.code], [400, 'list_jobs.other_environment'], 'a test key naming live: 400')
  for (const path of [`/api/jobs/${liveJob}`, `/api/verify/${liveJob}`]) {
    const r = await api('GET', path, { token: test })
    t.same([r.status, r.body.code], [404, 'job.not_found'], `${path} with the test key: not found`)
    t.notMatch(JSON.stringify(r.body), /live-world/, 'no address in the answer')
  }
  t.equal((await api('GET', `/api/jobs/${testJob}`, { token: live })).status, 404, 'a sandbox job is not found by the live key')
  t.match((await api('GET', `/api/jobs/${liveJob}`, { token: live })).body, { email: 'customer@live-world.example.com', environment: 'live' })
  t.match((await api('GET', `/api/jobs/${testJob}`, { token: session })).body, { environment: 'test' }, 'the session reads both, each marked')
})

t.test('batches: lists, results, kept files and chunks of the other environment are not found', async t => {
  const listed = async (token: string, query = ''): Promise<{ uuids: string[]; total: number }> => {
    const r = await api('GET', `/api/batches${query}`, { token })
    return { uuids: r.body.items.map((b: { uuid: string }) => b.uuid), total: r.body.total }
  }
  t.same(await listed(session), { uuids: [testBatch, liveBatch], total: 2 }, 'the session lists both (positive control)')
  t.same(await listed(test), { uuids: [testBatch], total: 1 }, 'the test key: the sandbox batch only')
  t.same(await listed(live), { uuids: [liveBatch], total: 1 }, 'the live key: the live batch only')
  t.same(await listed(session, '?environment=live'), { uuids: [liveBatch], total: 1 }, 'the session naming live')
  t.same((await api('GET', '/api/batches?environment=live', { token: test })).body.code, 'list_batches.other_environment')

  for (const [path, what] of [
    [`/api/batches/${liveBatch}`, 'the batch'],
    [`/api/batches/${liveBatch}/results`, 'its results'],
    [`/api/batches/${liveBatch}/results?limit=96`, 'a page of them']
  ]) {
    const r = await api('GET', path, { token: test })
    t.same([r.status, r.body.code], [404, 'batch.not_found'], `${what}, with the test key: not found`)
  }
  const csv = await fetch(`${svc.url}/api/batches/${liveBatch}/results`, { headers: { authorization: `Bearer ${test}`, accept: 'text/csv' } })
  const csvText = await csv.text()
  t.equal(csv.status, 404, 'its results as CSV: not found')
  t.notMatch(csvText, /live-world/, 'no address')
  const kept = await getSource(test, liveBatch)
  t.equal(kept.status, 404, 'its kept file: not found')
  t.notMatch(kept.text, /live-world/)
  t.equal((await getSource(live, liveBatch)).status, 200, 'the live key downloads it (positive control)')
  t.match((await getSource(live, liveBatch)).text, /first@live-world\.example\.com/)

  t.equal(await putSource(test, liveBatch, 'email\nplanted@sandbox.example.com\n'), 404, 'the test key cannot replace the live kept file')
  t.equal((await api('DELETE', `/api/batches/${liveBatch}/source`, { token: test })).status, 404, 'nor remove it')
  t.match((await getSource(session, liveBatch)).text, /first@live-world\.example\.com/, 'the live file is still the live one')
  t.notMatch((await getSource(session, liveBatch)).text, /planted/)

  const before = (await api('GET', '/api/wallet', { token: session })).body.balance
  const chunk = await api('POST', `/api/batches/${liveBatch}/emails`, { token: test, body: { emails: ['fourth@live-world.example.com'] } })
  t.same([chunk.status, chunk.body.code], [404, 'batch.not_found'], 'a chunk from the test key to the live batch: not found')
  const reverse = await api('POST', `/api/batches/${testBatch}/emails`, { token: live, body: { emails: ['c@sandbox.example.com'] } })
  t.same([reverse.status, reverse.body.code], [404, 'batch.not_found'], 'and from the live key to the sandbox batch')
  t.equal((await api('GET', '/api/wallet', { token: session })).body.balance, before, 'nothing reserved')
  t.equal((await api('GET', `/api/batches/${liveBatch}`, { token: session })).body.progress.total, 3, 'nothing added')
  const bySession = await api('POST', `/api/batches/${testBatch}/emails`, { token: session, body: { emails: ['c@sandbox.example.com'] } })
  t.same(
    [bySession.status, bySession.body.code],
    [409, 'add_chunk.intake_closed'],
    "the session finds the sandbox batch (it acts in the batch's environment: environments.test.ts adds to an open one), closed"
  )
  t.equal((await api('GET', '/api/wallet', { token: session })).body.balance, before, 'no live token spent')
  t.equal((await api('GET', `/api/batches/${testBatch}/results`, { token: test })).body.total, 2, "the test key reads its own batch's results")
})

t.test("usage: each credential's statistics are its own environment's", async t => {
  const totals = async (token: string, query = ''): Promise<{ submitted: number; completed: number }> => {
    const r = await api('GET', `/api/stats/overview${query}`, { token })
    return { submitted: r.body.totals.submitted, completed: r.body.totals.completed }
  }
  // The usage read model counts a chunk's items as they are recorded: wait for all of them (positive control).
  await waitUntil(async () => (await totals(session)).completed === 7, 20_000)
  t.same(await totals(session), { submitted: 7, completed: 7 }, 'the session: 2 jobs and 5 batch items')
  t.same(await totals(test), { submitted: 3, completed: 3 }, 'the test key: its job and its 2 items')
  t.same(await totals(live), { submitted: 4, completed: 4 }, 'the live key: its job and its 3 items')
  t.same(await totals(session, '?environment=test'), { submitted: 3, completed: 3 }, 'the session naming test')
  const other = await api('GET', '/api/stats/overview?environment=live', { token: test })
  t.same([other.status, other.body.code], [400, 'stats_overview.other_environment'])
})

t.test('MCP: the tools of a test key read the sandbox only', async t => {
  const mcp = new Client({ name: 'environment-test', version: '1.0.0' })
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${test}` } } }))
  t.teardown(() => mcp.close())
  const list = await mcp.callTool({ name: 'list_jobs', arguments: {} })
  t.same(
    (list.structuredContent as { items: Array<{ uuid: string }> }).items.map(j => j.uuid),
    [testJob],
    'list_jobs: the sandbox job only'
  )
  const own = await mcp.callTool({ name: 'get_job', arguments: { uuid: testJob } })
  t.equal((own.structuredContent as { uuid: string }).uuid, testJob, 'get_job reads its own (positive control)')
  const theirs = await mcp.callTool({ name: 'get_job', arguments: { uuid: liveJob } })
  t.equal(theirs.isError, true, 'get_job of the live job: not found')
  t.notMatch(JSON.stringify(theirs), /live-world/)
})

t.test('the wallet holds live tokens: a test key is refused it, and its estimate shows none', async t => {
  const wallet = (await api('GET', '/api/wallet', { token: session })).body
  t.ok(wallet.granted > 0, `the account holds live tokens (${wallet.balance} available)`)
  t.same((await api('GET', '/api/wallet', { token: live })).body, wallet, 'the live key reads the wallet (positive control)')
  for (const path of [
    '/api/wallet',
    '/api/wallet/balance-history?granularity=day&days=7',
    '/api/wallet/transactions',
    '/api/wallet/transactions/grouped',
    '/api/wallet/transactions?sort=nonsense'
  ]) {
    const r = await api('GET', path, { token: test })
    t.same([r.status, r.body.code], [403, 'wallet.live_only'], `${path} with the test key: 403`)
    t.notOk('balance' in r.body || 'items' in r.body || 'series' in r.body, 'nothing of the wallet in the answer')
  }
  const estimate = await api('POST', '/api/batches/estimate', { token: test, body: { addresses: 5000, checks: ['syntax', 'dns'] } })
  t.equal(estimate.status, 200)
  t.match(estimate.body, { cost_per_address: 0, cost: 0, balance: 0, covered: 5000 }, 'the sandbox costs nothing and shows no live balance')
  const liveEstimate = await api('POST', '/api/batches/estimate', { token: live, body: { addresses: 5000, checks: ['syntax', 'dns'] } })
  t.equal(liveEstimate.body.balance, wallet.balance, "the live key's estimate is against the live balance")
  const mcp = new Client({ name: 'environment-test', version: '1.0.0' })
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${test}` } } }))
  t.teardown(() => mcp.close())
  const w = await mcp.callTool({ name: 'get_wallet', arguments: {} })
  t.equal(w.isError, true, 'MCP get_wallet with the test key: refused')
  t.match(JSON.stringify(w.content), /wallet\.live_only/)
})

t.test("webhooks: a test key's endpoint hears of sandbox jobs only, a live key's of live ones; neither manages the other's", async t => {
  const received: Array<{ path: string; event: string; subject: string }> = []
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => {
      body += c.toString()
    })
    req.on('end', () => {
      const b = JSON.parse(body) as { event: string; job_uuid: string; batch_uuid?: string }
      received.push({ path: req.url ?? '', event: b.event, subject: b.batch_uuid ?? b.job_uuid })
      res.writeHead(200).end()
    })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.142.2', resolve))
  t.teardown(() => new Promise<void>(resolve => receiver.close(() => resolve())))
  const base = `http://127.0.142.2:${(receiver.address() as AddressInfo).port}`
  const endpoint = async (token: string, path: string): Promise<{ uuid: string; environment: string }> => {
    const r = await api('POST', '/api/webhooks', { token, body: { url: `${base}${path}`, events: ['job.completed', 'batch.completed'] } })
    t.equal(r.status, 201, `${path} created`)
    return r.body
  }
  const liveHook = await endpoint(live, '/live')
  const testHook = await endpoint(test, '/test')
  t.same([liveHook.environment, testHook.environment], ['live', 'test'], "each endpoint is its creator's environment")
  const listed = async (token: string, query = ''): Promise<string[]> =>
    (await api('GET', `/api/webhooks${query}`, { token })).body.map((w: { uuid: string }) => w.uuid)
  t.same((await listed(session)).sort(), [liveHook.uuid, testHook.uuid].sort(), 'the session lists both (positive control)')
  t.same(await listed(test), [testHook.uuid], 'the test key lists its own')
  t.same(await listed(live), [liveHook.uuid], 'the live key lists its own')
  t.same(await listed(session, '?environment=test'), [testHook.uuid], 'the session naming test')
  t.equal((await api('GET', '/api/webhooks?environment=live', { token: test })).body.code, 'list_webhooks.other_environment')

  // The test key cannot read, change, test, list the deliveries of, or delete the live endpoint.
  const get = await api('GET', `/api/webhooks/${liveHook.uuid}`, { token: test })
  t.same([get.status, get.body.code], [404, 'webhook.not_found'], 'read: not found')
  t.notMatch(JSON.stringify(get.body), /127\.0\.142/, 'its URL is not shown')
  const patch = await api('PATCH', `/api/webhooks/${liveHook.uuid}`, { token: test, body: { url: `${base}/hijacked`, status: 'disabled' } })
  t.same([patch.status, patch.body.code], [404, 'update_webhook.not_found'], 'change: not found')
  t.equal((await api('POST', `/api/webhooks/${liveHook.uuid}/test`, { token: test })).status, 404, 'test-fire: not found')
  t.equal((await api('GET', `/api/webhooks/${liveHook.uuid}/deliveries`, { token: test })).status, 404, 'its deliveries: not found')
  t.equal((await api('DELETE', `/api/webhooks/${liveHook.uuid}`, { token: test })).status, 204, "delete: 204, as for another account's endpoint")
  t.match(
    (await api('GET', `/api/webhooks/${liveHook.uuid}`, { token: session })).body,
    { url: `${base}/live`, status: 'active' },
    'the live endpoint is still there, unchanged'
  )
  t.equal(
    (await api('PATCH', `/api/webhooks/${testHook.uuid}`, { token: live, body: { status: 'disabled' } })).status,
    404,
    "the live key cannot change the test key's"
  )
  t.equal((await api('POST', `/api/webhooks/${testHook.uuid}/test`, { token: test })).status, 200, 'the test key test-fires its own (positive control)')

  // Jobs and a batch of each environment, then one job of each last: with deliveries one at a time in order, their arrival means every earlier one has arrived.
  const testJob2 = await jobBy(test, 'hooked@sandbox.example.com')
  const liveJob2 = await jobBy(live, 'hooked@live-world.example.com')
  const testBatch2 = (await api('POST', '/api/batches', { token: test, body: { emails: ['x@sandbox.example.com'], checks: ['syntax'], final: true } })).body
    .uuid
  const liveLast = await jobBy(live, 'last@live-world.example.com')
  const testLast = await jobBy(test, 'last@sandbox.example.com')
  await waitUntil(() => received.some(r => r.subject === liveLast) && received.some(r => r.subject === testLast), 20_000)
  const heard = (path: string, event: string): string[] =>
    received
      .filter(r => r.path === path && r.event === event)
      .map(r => r.subject)
      .sort()
  t.same(heard('/live', 'job.completed'), [liveJob2, liveLast].sort(), 'the live endpoint heard of the live jobs only')
  t.same(heard('/live', 'batch.completed'), [], 'and of no sandbox batch')
  const sample = received.filter(r => r.path === '/test' && ![testJob2, testLast].includes(r.subject) && r.event === 'job.completed')
  t.equal(sample.length, 1, 'the test endpoint got the sample it test-fired')
  t.same(
    heard('/test', 'job.completed').filter(s => s !== sample[0]?.subject),
    [testJob2, testLast].sort(),
    'and heard of the sandbox jobs only'
  )
  t.same(heard('/test', 'batch.completed'), [testBatch2], 'and of the sandbox batch')
  t.same(
    received.filter(r => r.path === '/hijacked'),
    [],
    'nothing went where the test key tried to send it'
  )

  // A test key deletes its own; an endpoint made in the console is live.
  t.equal((await api('DELETE', `/api/webhooks/${testHook.uuid}`, { token: test })).status, 204)
  t.same(await listed(session), [liveHook.uuid], 'the test endpoint is gone')
  const byConsole = await endpoint(session, '/console')
  t.equal(byConsole.environment, 'live', "a session's endpoint is live")
  t.same(await listed(test), [], 'and not listed to the test key')
})

t.test('an Idempotency-Key claimed by a test key does not hold up a live request, and each replays its own', async t => {
  const submit = async (token: string, email: string): Promise<{ status: number; body: any; replayed: string | null }> => {
    const r = await api('POST', '/api/verify', { token, body: { email, checks: ['syntax'] }, headers: { 'idempotency-key': 'order-4242' } })
    return { status: r.status, body: r.body, replayed: r.headers.get('idempotent-replayed') }
  }
  const sandbox = await submit(test, 'buyer@sandbox.example.com')
  t.equal(sandbox.status, 202, 'the test key claims the key')
  const first = await submit(live, 'buyer@live-world.example.com')
  t.equal(first.status, 202, 'a live request with the same key is accepted at once (not 422 for 24 h)')
  t.not(first.body.uuid, sandbox.body.uuid, 'a job of its own')
  t.equal(first.body.environment, 'live')
  const again = await submit(live, 'buyer@live-world.example.com')
  t.same([again.status, again.body.uuid, again.replayed], [200, first.body.uuid, 'true'], 'the live replay answers the live job')
  const fromConsole = await submit(session, 'buyer@live-world.example.com')
  t.same([fromConsole.status, fromConsole.body.uuid], [200, first.body.uuid], 'a session is live: it replays the live job too')
  const sandboxAgain = await submit(test, 'buyer@sandbox.example.com')
  t.same([sandboxAgain.status, sandboxAgain.body.uuid, sandboxAgain.replayed], [200, sandbox.body.uuid, 'true'], 'the sandbox replay answers the sandbox job')
  const reused = await submit(live, 'someone.else@live-world.example.com')
  t.same([reused.status, reused.body.code], [422, 'submit_job.idempotency_key_reused'], 'within one environment a key still stands for one request')
})
