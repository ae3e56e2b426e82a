import { StoreUnavailableError } from '../../ports/store-unavailable.ts'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { submitJob, MAX_EMAIL_INPUT } from '../../flows/job-submission/submit-job.ts'
import { createBatch } from '../../flows/batch-submission/create-batch.ts'
import { DomainError } from '../../domain/shared.ts'
import type { Scope } from '../../domain/api-key/scopes.ts'
import { getJob, type JobDoc } from '../../projections/jobs.ts'
import { listJobs } from '../../projections/list-jobs.ts'
import { getWallet } from '../../projections/wallets.ts'
import { environmentOf, principalOf, type Principal } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'
import { jobView } from './jobs.ts'

/**
 * The MCP SDK, loaded by the first call to `/mcp` and kept: every process that serves the
 * API would otherwise pay its load (about 0.25 s of CPU) at start, whether or not an
 * assistant ever calls it.
 */
let sdk: Promise<{
  McpServer: typeof McpServer
  StreamableHTTPServerTransport: typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js').StreamableHTTPServerTransport
}> | null = null
const loadSdk = async (): Promise<NonNullable<Awaited<typeof sdk>>> => {
  sdk ??= Promise.all([import('@modelcontextprotocol/sdk/server/mcp.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]).then(([m, h]) => ({
    McpServer: m.McpServer,
    StreamableHTTPServerTransport: h.StreamableHTTPServerTransport
  }))
  return await sdk
}

/** How long `verify_email` waits for its job to complete before answering with the job as it stands (ms). */
const VERIFY_WAIT_MS = 20_000

/** The caller's job (its account's and environment's), as soon as it ends or once `ms` have passed (the read models' commit wakes it: no polling). */
async function waitForJob(rt: HttpRuntime, p: Principal, uuid: string, ms: number, signal: AbortSignal): Promise<JobDoc | null> {
  const read = async (): Promise<JobDoc | null> => await getJob(rt.ctx, p.user_uuid, environmentOf(p), uuid)
  if (rt.waits === null || ms === 0) return await read()
  // Past the caps on waiting reads, the job as it stands at once (the tool says to ask get_job then).
  return (await rt.waits.until(p.user_uuid, uuid, ms, read, d => d === null || d.status === 'completed' || d.status === 'failed', signal)).value
}

/** A tool's structured answer (also as text, for clients that read only text). */
const answer = (value: Record<string, unknown>): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value })
const refusal = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] })

/**
 * The tools of one request's MCP server, bound to its caller: each needs the scope its
 * HTTP operation needs (docs/interface.md §5), and calls the same commands and queries.
 */
function serverFor(Server: typeof McpServer, rt: HttpRuntime, p: Principal, log: (err: unknown) => void): McpServer {
  const server = new Server({ name: 'email-verification', version: '0.9.0' })
  const guarded =
    <A>(scope: Scope, fn: (args: A, signal: AbortSignal) => Promise<CallToolResult>) =>
    async (args: A, extra: { signal: AbortSignal }): Promise<CallToolResult> => {
      if (!p.scopes.includes(scope)) return refusal(`forbidden: this credential lacks the scope ${scope}`)
      try {
        return await fn(args, extra.signal)
      } catch (err) {
        if (err instanceof DomainError || err instanceof HttpProblem) return refusal(`${err.code}: ${err.message}`)
        if (err instanceof StoreUnavailableError)
          return refusal('store.unreachable: the service cannot reach its database right now; try again in a few seconds')
        // Anything else is ours, not the caller's: logged, and told as the HTTP API tells a 500.
        log(err)
        return refusal('internal_error: an unexpected error occurred; it has been logged')
      }
    }

  server.registerTool(
    'verify_email',
    {
      title: 'Verify an email address',
      description: `Checks whether an address will accept mail (syntax, domain, MX, SMTP mailbox, catch-all, disposable, role). Costs tokens like POST /api/verify. Waits up to ${VERIFY_WAIT_MS / 1000} s for the result; after that, the job's uuid to ask get_job with.`,
      inputSchema: { email: z.string().max(MAX_EMAIL_INPUT), checks: z.array(z.string()).min(1).max(32).optional() }
    },
    guarded('email:verify:single', async ({ email, checks }: { email: string; checks?: string[] }, signal: AbortSignal) => {
      const submitted = await submitJob(rt.ctx, p, { email: email.trim(), checks })
      await rt.caughtUp(null, submitted.position)
      // The answer without polling: woken when the job ends (as `GET /api/verify/{uuid}?wait=`), or the job as it stands after the wait.
      const doc = await waitForJob(rt, p, submitted.job_uuid, VERIFY_WAIT_MS, signal)
      return answer(doc ? { ...jobView(doc) } : { uuid: submitted.job_uuid, status: 'queued' })
    })
  )

  server.registerTool(
    'get_job',
    {
      title: 'A verification job',
      description: 'A job by uuid, with its per-check results (GET /api/verify/{uuid}); with wait_s, answered as soon as it ends (at most 30 s).',
      inputSchema: { uuid: z.string().max(64), wait_s: z.number().int().min(0).max(30).optional() }
    },
    guarded('results:read', async ({ uuid, wait_s: waitS }: { uuid: string; wait_s?: number }, signal: AbortSignal) => {
      const doc = /^[0-9a-f-]{36}$/.test(uuid) ? await waitForJob(rt, p, uuid, (waitS ?? 0) * 1000, signal) : null
      return doc ? answer({ ...jobView(doc) }) : refusal('job.not_found: no such job')
    })
  )

  server.registerTool(
    'list_jobs',
    {
      title: 'Recent verification jobs',
      description: "Standalone jobs, newest first (GET /api/jobs): a key's own environment's, an agent's the live ones, a session's both.",
      inputSchema: { limit: z.number().int().min(1).max(100).optional(), status: z.array(z.enum(['queued', 'deferred', 'completed', 'failed'])).optional() }
    },
    guarded('results:read', async ({ limit, status }: { limit?: number; status?: string[] }) => {
      const page = await listJobs(rt.ctx, p.user_uuid, { environment: environmentOf(p) ?? undefined, status }, 'created_at', -1, {
        limit: limit ?? 20,
        offset: 0
      })
      return answer({ items: page.items.map(j => ({ ...jobView(j) })), total: page.total })
    })
  )

  server.registerTool(
    'get_wallet',
    {
      title: 'The token wallet',
      description: 'Tokens available, reserved, spent and granted (GET /api/wallet).',
      inputSchema: {}
    },
    guarded('billing:read', async () => {
      // Live tokens only: a test key never spends them, nor reads them (as GET /api/wallet).
      if (p.environment === 'test') return refusal('wallet.live_only: the wallet holds live tokens, which a test key never spends')
      const w = await getWallet(rt.ctx, p.user_uuid)
      return answer({ balance: w?.balance ?? 0, reserved: w?.reserved ?? 0, spent: w?.spent ?? 0, granted: w?.granted ?? 0 })
    })
  )

  server.registerTool(
    'verify_list',
    {
      title: 'Verify a list of addresses',
      description:
        'A batch of addresses (POST /api/batches with final true): answers the batch at once; its results come with GET /api/batches/{uuid}/results.',
      inputSchema: { emails: z.array(z.string().max(MAX_EMAIL_INPUT)).min(1).max(10_000), name: z.string().max(200).optional() }
    },
    guarded('email:verify:bulk', async ({ emails, name }: { emails: string[]; name?: string }) => {
      const r = await createBatch(rt.ctx, p, { emails, final: true, name: name ?? null })
      return answer({ batch_uuid: r.batch_uuid, accepted: r.accepted, duplicates: r.duplicates, invalid: r.invalid, reserved: r.reserved })
    })
  )
  return server
}

/**
 * The MCP endpoint (Model Context Protocol, Streamable HTTP, stateless: a server per
 * request) at `/mcp`, for AI assistants acting for an account. Protected as the MCP
 * authorization specification says: a bearer credential (an OAuth access token, an agent
 * token, an API key or a session token; each with its own scopes and rate limit), and
 * without one a 401 whose `WWW-Authenticate` points to the protected resource metadata
 * (RFC 9728 §5.1).
 */
export async function mcpRoutes(fastify: FastifyInstance, rt: HttpRuntime): Promise<void> {
  await fastify.register(async scope => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      if (reply.statusCode === 401) reply.header('www-authenticate', `Bearer resource_metadata="${rt.ctx.base_url()}/.well-known/oauth-protected-resource/mcp"`)
      return payload
    })
    const app = scope.withTypeProvider<ZodTypeProvider>()
    app.route({
      method: 'POST',
      url: '/mcp',
      config: { auth: 'any' },
      schema: {
        operationId: 'mcp',
        summary: 'Model Context Protocol (Streamable HTTP): tools verify_email, get_job, list_jobs, get_wallet, verify_list',
        tags: ['MCP'],
        body: z.looseObject({}).meta({ description: 'one JSON-RPC message (batches are refused: each tool call counts against the rate limit as a request)' }),
        response: {
          200: { description: 'JSON-RPC response(s)', content: { 'application/json': { schema: z.unknown() } } },
          202: z.null().meta({ description: 'Notifications accepted' }),
          ...problems(400, 401, 413, 415)
        }
      },
      handler: async (request, reply) => {
        const { McpServer: Server, StreamableHTTPServerTransport } = await loadSdk()
        const server = serverFor(Server, rt, principalOf(request), err => {
          request.log.error({ err }, 'mcp tool failed')
        })
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
        // The answer leaves through the transport: headers set so far (RateLimit-*) go with it.
        for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[])
        reply.hijack()
        reply.raw.on('close', () => {
          void transport.close()
          void server.close()
        })
        await server.connect(transport)
        await transport.handleRequest(request.raw, reply.raw, request.body)
      }
    })
    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url: '/mcp',
        config: { auth: 'any' },
        // Answered (MCP clients probe GET for a stream) but not an operation of the document: nothing is offered here.
        schema: {
          operationId: `mcp${method}`,
          summary: 'Not offered: the endpoint is stateless (no server-sent stream, no session to end)',
          tags: ['MCP'],
          hide: true,
          response: { ...problems(401, 405) }
        },
        handler: async () => {
          throw new HttpProblem(405, 'mcp.method_not_allowed', 'this MCP endpoint is stateless: POST only')
        }
      })
    }
  })
}
