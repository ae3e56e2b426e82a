// The MCP endpoint: the MCP SDK's own
// client over Streamable HTTP, with an OAuth access token and with an agent token; tools
// listed, an address verified against the mail world on loopback (its own records are the
// oracle); a credential without `email:verify:single` cannot verify; no credential → 401
// pointing to the protected resource metadata (RFC 9728 §5.1).
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startMailWorld } from '../support/mail-world.ts'
import { signUp, build } from '../support/service.ts'
import { grantFor } from '../support/oauth-flow.ts'

// This file owns 127.0.94.0/24.
const world = await startMailWorld({
  dns_ip: '127.0.94.1',
  domains: [{ name: 'mcp-mail.com', mx: [{ preference: 10, exchange: 'mx.mcp-mail.com' }] }],
  hosts: [
    {
      name: 'mx.mcp-mail.com',
      ip: '127.0.94.2',
      rcpt: a => (a.startsWith('jane') ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 No such user' })
    }
  ]
})
t.teardown(() => world.close())
const { dataDir, service, api } = await build(t, { VERIFIER_DNS_SERVERS: world.dns_server })
const password = 'correct horse battery staple'
const session = await signUp(api, dataDir, 'assistant-owner@example.com', password)

async function connect(token: string): Promise<Client> {
  const c = new Client({ name: 'mcp-test', version: '1.0.0' })
  await c.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return c
}

t.test('without a credential: 401 pointing to the protected resource metadata', async t => {
  const r = await fetch(`${service.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
  })
  t.equal(r.status, 401)
  t.equal(
    r.headers.get('www-authenticate'),
    `Bearer resource_metadata="${service.url}/.well-known/oauth-protected-resource/mcp"`,
    'the path-aware metadata of the resource (RFC 9728 §3.1)'
  )
  const batch = await fetch(`${service.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' }
    ])
  })
  t.equal(batch.status, 400, 'a JSON-RPC batch is refused (each tool call counts against the rate limit as a request)')
  const meta = (await (await fetch(`${service.url}/.well-known/oauth-protected-resource`)).json()) as { authorization_servers: string[] }
  t.same(meta.authorization_servers, [service.url], 'which names this authorization server')
})

for (const kind of ['OAuth access token', 'agent token'] as const) {
  t.test(`${kind}: tools listed, an address verified`, async t => {
    const token =
      kind === 'agent token'
        ? ((await api('POST', '/api/agents', { token: session, body: { name: 'assistant', scopes: ['email:verify:single', 'results:read', 'billing:read'] } }))
            .body.token as string)
        : (await grantFor(service.url, { email: 'assistant-owner@example.com', password, scope: 'email:verify:single results:read billing:read' })).access_token
    const c = await connect(token)
    t.teardown(() => c.close())
    const tools = (await c.listTools()).tools.map(x => x.name).sort()
    t.same(tools, ['get_job', 'get_wallet', 'list_jobs', 'verify_email', 'verify_list'])
    // An address of its own per credential (the engine caches results).
    const email = kind === 'agent token' ? 'jane.agent@mcp-mail.com' : 'jane.oauth@mcp-mail.com'
    const rcpts = world.transcript.filter(l => l.includes(`RCPT TO:<${email}>`)).length
    const r = await c.callTool({ name: 'verify_email', arguments: { email } })
    t.notOk(r.isError, JSON.stringify(r.content))
    const job = r.structuredContent as { uuid: string; status: string; verdict: string; reason: string }
    t.match(job, { status: 'completed', verdict: 'valid', reason: 'accepted_email' })
    t.equal(world.transcript.filter(l => l.includes(`RCPT TO:<${email}>`)).length, rcpts + 1, 'the mail server was asked about it once')
    const again = await c.callTool({ name: 'get_job', arguments: { uuid: job.uuid } })
    t.match(again.structuredContent, { uuid: job.uuid, verdict: 'valid' })
    const wallet = await c.callTool({ name: 'get_wallet', arguments: {} })
    t.type((wallet.structuredContent as { balance: number }).balance, 'number')
  })
}

t.test('an API test key: a sandbox address (docs/design/verification.md "Sandbox"), no network', async t => {
  const key = (await api('POST', '/api/keys', { token: session, body: { name: 'sandbox', environment: 'test' } })).body.raw_key as string
  const c = await connect(key)
  t.teardown(() => c.close())
  const connections = world.connection_log.length
  const r = await c.callTool({ name: 'verify_email', arguments: { email: 'mailbox-full@example.com' } })
  t.match(r.structuredContent, { status: 'completed', environment: 'test', verdict: 'risky', reason: 'mailbox_full' }, "the sandbox's mailbox-full branch")
  // Positive control for the absence: a live verification through another credential reaches the world.
  const live = await connect((await api('POST', '/api/agents', { token: session, body: { name: 'control', scopes: ['email:verify:single'] } })).body.token)
  t.teardown(() => live.close())
  await live.callTool({ name: 'verify_email', arguments: { email: 'jane.control@mcp-mail.com' } })
  t.ok(
    world.transcript.some(l => l.includes('RCPT TO:<jane.control@mcp-mail.com>')),
    'the control reached the mail server'
  )
  t.ok(
    world.connection_log.slice(connections).every(x => x.ip === '127.0.94.2'),
    'and no connection went anywhere else'
  )
  t.equal(world.transcript.filter(l => l.includes('mailbox-full@example.com')).length, 0, 'the sandbox address reached no mail server')
})

t.test('a credential without email:verify:single cannot call verify_email (nor verify_list without email:verify:bulk)', async t => {
  const grant = await grantFor(service.url, { email: 'assistant-owner@example.com', password, scope: 'results:read' })
  const c = await connect(grant.access_token)
  t.teardown(() => c.close())
  const r = await c.callTool({ name: 'verify_email', arguments: { email: 'jane@mcp-mail.com' } })
  t.equal(r.isError, true)
  t.match(JSON.stringify(r.content), /email:verify:single/)
  t.equal((await c.callTool({ name: 'verify_list', arguments: { emails: ['jane@mcp-mail.com'] } })).isError, true)
  const list = await c.callTool({ name: 'list_jobs', arguments: { limit: 5 } })
  t.notOk(list.isError, 'what the scope allows works')
})
