import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { createAgent, revokeAgent } from '../../commands/agents.ts'
import type { AgentDoc } from '../../projections/agents.ts'
import { authenticate } from '../plugins/auth.ts'
import { paginated, parsePage } from '../pagination.ts'
import { HttpProblem, parseUuid, parseWith } from '../problem.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The public view of an agent: never its token or the token's hash. */
export function agentView (a: AgentDoc): Record<string, unknown> {
  return { uuid: a.uuid, name: a.name, scopes: a.scopes, token_prefix: a.token_prefix, status: a.revoked_at === null ? 'usable' : 'revoked', created_at: a.created_at, revoked_at: a.revoked_at }
}

const CreateAgent = z.object({
  name: z.string().max(1000),
  scopes: z.array(z.string().max(100)).max(64)
}).strict()

/** Agents (interface section 4, "Agents"). Auth J: only a signed-in account manages its agents. */
export function agentRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  const agents = () => rt.ctx.reads.collection<AgentDoc>('agents')

  app.get('/api/agents', async request => {
    const p = await authenticate(rt.ctx, request, 'jwt')
    const page = parsePage(request.query)
    const { items, total } = await agents().find({ user_uuid: p.user_uuid }, { sort: { created_at: -1 }, limit: page.limit, offset: page.offset })
    return paginated(items.map(agentView), total, page)
  })

  app.post('/api/agents', async (request, reply) => {
    const p = await authenticate(rt.ctx, request, 'jwt')
    const body = parseWith(CreateAgent, request.body, 'create_agent.invalid_request')
    const created = await createAgent(rt.ctx, { user_uuid: p.user_uuid, ...body })
    await rt.caughtUp(created.position)
    const doc = await agents().get(created.agent_uuid)
    return reply.code(201).send({ ...(doc ? agentView(doc) : { uuid: created.agent_uuid }), token: created.token })
  })

  app.get('/api/agents/:uuid', async request => {
    const uuid = parseUuid((request.params as { uuid?: string }).uuid)
    const p = await authenticate(rt.ctx, request, 'jwt')
    const doc = await agents().get(uuid)
    if (!doc || doc.user_uuid !== p.user_uuid) throw new HttpProblem(404, 'agent.not_found', 'no such agent')
    return agentView(doc)
  })

  app.delete('/api/agents/:uuid', async request => {
    const uuid = parseUuid((request.params as { uuid?: string }).uuid)
    const p = await authenticate(rt.ctx, request, 'jwt')
    const position = await revokeAgent(rt.ctx, p.user_uuid, uuid)
    await rt.caughtUp(position)
    const doc = await agents().get(uuid)
    if (!doc || doc.user_uuid !== p.user_uuid) throw new HttpProblem(404, 'agent.not_found', 'no such agent')
    return agentView(doc)
  })
}
