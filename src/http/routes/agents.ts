import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { createAgent } from '../../commands/agent/create-agent.ts'
import { revokeAgent } from '../../commands/agent/revoke-agent.ts'
import { agentsOf, getAgent, type AgentDoc } from '../../projections/agents.ts'
import { principalOf } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { BODY_PROBLEMS, PageQuery, Paginated, Timestamp, UuidParams, json, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

/** An agent (docs/interface.md §2): never its token or the token's hash. */
const Agent = z
  .object({
    uuid: z.string(),
    name: z.string(),
    scopes: z.array(z.string()),
    token_prefix: z.string(),
    status: z.enum(['usable', 'revoked']),
    created_at: Timestamp,
    revoked_at: Timestamp.nullable()
  })
  .meta({ id: 'Agent' })
type AgentView = z.infer<typeof Agent>

/** The public view of an agent: never its token or the token's hash. */
function agentView(a: AgentDoc): AgentView {
  return {
    uuid: a.uuid,
    name: a.name,
    scopes: a.scopes,
    token_prefix: a.token_prefix,
    status: a.revoked_at === null ? 'usable' : 'revoked',
    created_at: a.created_at,
    revoked_at: a.revoked_at
  }
}

const CreateAgent = z
  .object({
    name: z.string().max(1000),
    scopes: z.array(z.string().max(100)).max(64)
  })
  .strict()
  .meta({ examples: [{ name: 'crm sync', scopes: ['email:verify:single', 'results:read'] }] })

/** Agents (docs/interface.md §4, "Agents"). Auth J: only a signed-in account manages its agents. */
export function agentRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Agents']

  app.route({
    method: 'GET',
    url: '/api/agents',
    config: { auth: 'jwt', invalid: 'request.invalid_pagination' },
    schema: {
      operationId: 'listAgents',
      summary: "The account's agents, newest first",
      tags,
      querystring: PageQuery,
      response: { 200: Paginated(Agent), ...problems(400, 401) }
    },
    handler: async request => {
      const { limit, offset } = request.query
      const { items, total } = await agentsOf(rt.ctx, principalOf(request).user_uuid, { limit, offset })
      return { items: items.map(agentView), total, limit, offset }
    }
  })

  app.route({
    method: 'POST',
    url: '/api/agents',
    config: { auth: 'jwt', invalid: 'create_agent.invalid_request' },
    schema: {
      operationId: 'createAgent',
      summary: 'Create an agent; its bearer token is shown once',
      tags,
      body: CreateAgent,
      response: {
        201: json(Agent.extend({ token: z.string().meta({ description: '`sva_…`, shown once' }) }), 'The agent with its token'),
        ...problems(...BODY_PROBLEMS, 401, 403)
      }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      const created = await createAgent(rt.ctx, { user_uuid: p.user_uuid, ...request.body })
      await rt.caughtUp(request, created.position)
      const { agent_uuid: uuid, ...agent } = created.agent
      return reply.code(201).send({ ...agentView({ _id: uuid, uuid, ...agent, revoked_at: null }), token: created.token })
    }
  })

  app.route({
    method: 'GET',
    url: '/api/agents/:uuid',
    config: { auth: 'jwt' },
    schema: { operationId: 'getAgent', summary: 'An agent', tags, params: UuidParams, response: { 200: Agent, ...problems(400, 401, 404) } },
    handler: async request => {
      const doc = await getAgent(rt.ctx, request.params.uuid)
      if (!doc || doc.user_uuid !== principalOf(request).user_uuid) throw new HttpProblem(404, 'agent.not_found', 'no such agent')
      return agentView(doc)
    }
  })

  app.route({
    method: 'DELETE',
    url: '/api/agents/:uuid',
    config: { auth: 'jwt' },
    schema: {
      operationId: 'revokeAgent',
      summary: 'Revoke an agent (idempotent: a repeat answers the same record)',
      tags,
      params: UuidParams,
      response: { 200: Agent, ...problems(400, 401, 404) }
    },
    handler: async request => {
      const p = principalOf(request)
      await rt.caughtUp(request, await revokeAgent(rt.ctx, p.user_uuid, request.params.uuid))
      const doc = await getAgent(rt.ctx, request.params.uuid)
      if (!doc || doc.user_uuid !== p.user_uuid) throw new HttpProblem(404, 'agent.not_found', 'no such agent')
      return agentView(doc)
    }
  })
}
