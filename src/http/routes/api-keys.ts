import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { createApiKey } from '../../commands/api-key/create-api-key.ts'
import { revokeApiKey } from '../../commands/api-key/revoke-api-key.ts'
import { updateApiKey } from '../../commands/api-key/update-api-key.ts'
import { apiKeysOf, getApiKey, type ApiKeyDoc } from '../../projections/api-keys.ts'
import type { Plan } from '../../domain/plans.ts'
import { HttpProblem } from '../problem.ts'
import { actorOf, principalOf } from '../plugins/auth.ts'
import { BODY_PROBLEMS, Timestamp, UuidParams, json, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

/** An API key (docs/interface.md §2): never its hash; the raw key only once, at creation. */
const ApiKey = z
  .object({
    uuid: z.string(),
    name: z.string(),
    environment: z.enum(['live', 'test']),
    key_prefix: z.string().meta({ description: 'the first characters of the raw key, for display' }),
    scopes: z.array(z.string()),
    enabled_checks: z.array(z.string()),
    rate_limit_per_minute: z.number().meta({ description: "requests per minute: the plan's, realigned when the plan changes; never writable" }),
    created_at: Timestamp,
    updated_at: Timestamp,
    revoked_at: Timestamp.nullable()
  })
  .meta({ id: 'ApiKey' })
type ApiKeyView = z.infer<typeof ApiKey>

/** The public view of a key: never its hash; its rate limit is the account's plan's now (docs/interface.md §8: realigned when the plan changes). */
function keyView(k: ApiKeyDoc, plan: Plan): ApiKeyView {
  return {
    uuid: k.uuid,
    name: k.name,
    environment: k.environment,
    key_prefix: k.key_prefix,
    scopes: k.scopes,
    enabled_checks: k.enabled_checks,
    rate_limit_per_minute: plan.rate_limit_per_minute,
    created_at: k.created_at,
    updated_at: k.updated_at ?? k.created_at,
    revoked_at: k.revoked_at
  }
}

const CreateKey = z
  .object({
    name: z.string(),
    environment: z.enum(['live', 'test']),
    scopes: z.array(z.string()).max(64).optional().meta({ description: 'default: the verification and read scopes the creating credential holds' }),
    enabled_checks: z.array(z.string()).max(64).optional().meta({ description: 'default: every check the creating credential holds' })
  })
  .strict()
  .meta({ examples: [{ name: 'crm sync', environment: 'live', scopes: ['email:verify:single', 'results:read'] }] })

const UpdateKey = z
  .object({
    name: z.string().optional(),
    enabled_checks: z.array(z.string()).max(64).optional()
  })
  .strict()
  .meta({
    description: 'name and/or enabled_checks; omitted fields keep their value; any other field (a rate limit) is a 400',
    examples: [{ name: 'crm sync (eu)' }, { enabled_checks: ['syntax', 'dns', 'smtp'] }]
  })

/** API keys (docs/interface.md §4, "API keys"). */
export function keyRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
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
      response: {
        201: json(ApiKey.extend({ raw_key: z.string().meta({ description: 'shown once; only its hash is kept' }) }), 'The key with its raw key'),
        ...problems(...BODY_PROBLEMS, 401, 403)
      }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      const created = await createApiKey(rt.ctx, { user_uuid: p.user_uuid, ...request.body, granter: p, actor: actorOf(p) })
      await rt.caughtUp(request, created.position)
      const { key_uuid: uuid, ...key } = created.key
      return reply.code(201).send({ ...keyView({ _id: uuid, uuid, ...key, updated_at: key.created_at, revoked_at: null }, p.plan), raw_key: created.raw_key })
    }
  })

  app.route({
    method: 'GET',
    url: '/api/keys',
    config: { auth: 'any', scope: 'api_keys:read' },
    schema: {
      operationId: 'listApiKeys',
      summary: "The account's keys, newest first",
      tags: ['API keys'],
      response: { 200: z.array(ApiKey), ...problems(401, 403) }
    },
    handler: async request => {
      const p = principalOf(request)
      return (await apiKeysOf(rt.ctx, p.user_uuid)).map(k => keyView(k, p.plan))
    }
  })

  app.route({
    method: 'GET',
    url: '/api/keys/me',
    config: { auth: 'api_key' },
    schema: {
      operationId: 'getCurrentApiKey',
      summary: 'The key that authenticates this request (a bearer API key only)',
      tags: ['API keys'],
      response: { 200: ApiKey, ...problems(401) }
    },
    handler: async request => {
      const p = principalOf(request)
      const doc = await getApiKey(rt.ctx, p.key_uuid!)
      if (!doc) throw new HttpProblem(401, 'auth.unauthorized', 'unknown or revoked API key')
      return keyView(doc, p.plan)
    }
  })

  /** The caller's key `uuid`. @throws HttpProblem 404 for an unknown key or another account's. */
  const owned = async (owner: string, uuid: string): Promise<ApiKeyDoc> => {
    const doc = await getApiKey(rt.ctx, uuid)
    if (!doc || doc.user_uuid !== owner) throw new HttpProblem(404, 'api_key.not_found', 'no such API key')
    return doc
  }

  app.route({
    method: 'GET',
    url: '/api/keys/:uuid',
    config: { auth: 'any', scope: 'api_keys:read' },
    schema: {
      operationId: 'getApiKey',
      summary: 'A key of the account',
      tags: ['API keys'],
      params: UuidParams,
      response: { 200: ApiKey, ...problems(400, 401, 403, 404) }
    },
    handler: async request => {
      const p = principalOf(request)
      return keyView(await owned(p.user_uuid, request.params.uuid), p.plan)
    }
  })

  app.route({
    method: 'PATCH',
    url: '/api/keys/:uuid',
    // The interface names `api_keys:read` (its 403 kept); a change also needs a write scope (issue 42 item 5).
    config: { auth: 'any', scope: 'api_keys:read', write_scope: 'api_keys:create', invalid: 'update_api_key.invalid_request' },
    schema: {
      operationId: 'updateApiKey',
      summary: 'Rename a key and/or set its enabled checks (a rate limit is never writable)',
      tags: ['API keys'],
      params: UuidParams,
      body: UpdateKey,
      response: { 200: json(ApiKey, 'The updated key'), ...problems(...BODY_PROBLEMS, 401, 403, 404) }
    },
    handler: async request => {
      const p = principalOf(request)
      await owned(p.user_uuid, request.params.uuid)
      await rt.caughtUp(
        request,
        await updateApiKey(rt.ctx, { user_uuid: p.user_uuid, key_uuid: request.params.uuid, ...request.body, granter: p, actor: actorOf(p) })
      )
      return keyView(await owned(p.user_uuid, request.params.uuid), p.plan)
    }
  })

  app.route({
    method: 'DELETE',
    url: '/api/keys/:uuid',
    config: { auth: 'any', scope: 'api_keys:revoke' },
    schema: {
      operationId: 'revokeApiKey',
      summary: 'Revoke a key: it stops authenticating at once (idempotent: a repeat answers the same record)',
      tags: ['API keys'],
      params: UuidParams,
      response: { 200: ApiKey, ...problems(400, 401, 403, 404) }
    },
    handler: async request => {
      const p = principalOf(request)
      await owned(p.user_uuid, request.params.uuid)
      await rt.caughtUp(request, await revokeApiKey(rt.ctx, p.user_uuid, request.params.uuid, p, 'revoked by the account', actorOf(p)))
      return keyView(await owned(p.user_uuid, request.params.uuid), p.plan)
    }
  })
}
