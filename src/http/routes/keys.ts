import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { createApiKey } from '../../commands/create-api-key.ts'
import { apiKeysOf, type ApiKeyDoc } from '../../projections/api-keys.ts'
import { actorOf, principalOf } from '../plugins/auth.ts'
import { BODY_PROBLEMS, Timestamp, json, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

/** An API key (interface section 2): never its hash; the raw key only once, at creation. */
export const ApiKey = z.object({
  uuid: z.string(),
  name: z.string(),
  environment: z.enum(['live', 'test']),
  key_prefix: z.string().meta({ description: 'the first characters of the raw key, for display' }),
  scopes: z.array(z.string()),
  enabled_checks: z.array(z.string()),
  rate_limit_per_minute: z.number().meta({ description: 'seeded from the plan; never writable' }),
  created_at: Timestamp,
  revoked_at: Timestamp.nullable()
}).meta({ id: 'ApiKey' })
export type ApiKeyView = z.infer<typeof ApiKey>

/** The public view of a key: never its hash. */
export function keyView (k: ApiKeyDoc): ApiKeyView {
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
  scopes: z.array(z.string()).max(64).optional().meta({ description: 'default: the verification and read scopes the creating credential holds' }),
  enabled_checks: z.array(z.string()).max(64).optional().meta({ description: 'default: every check the creating credential holds' })
}).strict().meta({ examples: [{ name: 'crm sync', environment: 'live', scopes: ['email:verify:single', 'results:read'] }] })

/** API keys (interface section 4, "API keys"). */
export function keyRoutes (fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  app.route({
    method: 'POST',
    url: '/api/keys',
    config: { auth: 'any', scope: 'api_keys:create', invalid: 'create_api_key.invalid_request' },
    schema: {
      operationId: 'createApiKey',
      summary: 'Create a key; its raw key is shown once',
      tags: ['API keys'],
      body: CreateKey,
      response: { 201: json(ApiKey.extend({ raw_key: z.string().meta({ description: 'shown once; only its hash is kept' }) }), 'The key with its raw key'), ...problems(...BODY_PROBLEMS, 401, 403) }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      const created = await createApiKey(rt.ctx, { user_uuid: p.user_uuid, ...request.body, granter: p, actor: actorOf(p) })
      await rt.caughtUp(created.position)
      const { key_uuid: uuid, ...key } = created.key
      return reply.code(201).send({ ...keyView({ _id: uuid, uuid, ...key, revoked_at: null }), raw_key: created.raw_key })
    }
  })

  app.route({
    method: 'GET',
    url: '/api/keys',
    config: { auth: 'any', scope: 'api_keys:read' },
    schema: { operationId: 'listApiKeys', summary: 'The account\'s keys, newest first', tags: ['API keys'], response: { 200: z.array(ApiKey), ...problems(401, 403) } },
    handler: async request => {
      return (await apiKeysOf(rt.ctx, principalOf(request).user_uuid)).map(keyView)
    }
  })
}
