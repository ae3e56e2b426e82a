import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { createApiKey } from '../../commands/create-api-key.ts'
import type { ApiKeyDoc } from '../../projections/api-keys.ts'
import { actorOf, authenticate, requireScope } from '../plugins/auth.ts'
import { parseWith } from '../problem.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The public view of a key: never its hash. */
export function keyView (k: ApiKeyDoc): Record<string, unknown> {
  return {
    uuid: k.uuid,
    name: k.name,
    environment: k.environment,
    key_prefix: k.key_prefix,
    scopes: k.scopes,
    enabled_checks: k.enabled_checks,
    rate_limit_per_minute: k.rate_limit_per_minute,
    created_at: k.created_at,
    revoked_at: k.revoked_at
  }
}

const CreateKey = z.object({
  name: z.string(),
  environment: z.enum(['live', 'test']),
  scopes: z.array(z.string()).max(64).optional(),
  enabled_checks: z.array(z.string()).max(64).optional()
}).strict()

/** API keys (interface section 4, "API keys"). */
export function keyRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  app.post('/api/keys', async (request, reply) => {
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'api_keys:create')
    const body = parseWith(CreateKey, request.body, 'create_api_key.invalid_request')
    const created = await createApiKey(rt.ctx, { user_uuid: p.user_uuid, ...body, granter: p, actor: actorOf(p) })
    await rt.caughtUp(created.position)
    const doc = await rt.ctx.reads.collection<ApiKeyDoc>('api_keys').get(created.key_uuid)
    return reply.code(201).send({ ...(doc ? keyView(doc) : { uuid: created.key_uuid }), raw_key: created.raw_key })
  })

  app.get('/api/keys', async request => {
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'api_keys:read')
    const { items } = await rt.ctx.reads.collection<ApiKeyDoc>('api_keys').find({ user_uuid: p.user_uuid }, { sort: { created_at: -1 } })
    return items.map(keyView)
  })
}
