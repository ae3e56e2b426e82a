import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { createWebhook } from '../../commands/webhook/create-webhook.ts'
import { deleteWebhook } from '../../commands/webhook/delete-webhook.ts'
import { updateWebhook } from '../../commands/webhook/update-webhook.ts'
import { testWebhook } from '../../commands/webhook-delivery/test-webhook.ts'
import { DomainError } from '../../domain/shared.ts'
import { attemptsOf, getWebhook, webhooksOf, type WebhookAttemptDoc, type WebhookDoc } from '../../projections/webhooks.ts'
import { actorOf, environmentOf, listedEnvironment, principalOf, type Principal } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { BODY_PROBLEMS, EnvironmentQuery, NoContent, PageQuery, Paginated, Timestamp, UuidParams, json, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'
import { ERASED } from '../../ports/sealer.ts'

/** A webhook endpoint (docs/interface.md §2): never its secret, but once at creation. */
const WebhookEndpoint = z
  .object({
    uuid: z.string(),
    environment: z.enum(['live', 'test']).meta({
      description:
        "the jobs and batches it hears of: its creator's environment (a `svc_test_…` key's endpoint the sandbox's, a live key's, agent's or session's the live ones)"
    }),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    status: z.enum(['active', 'disabled']),
    disabled_reason: z.string().nullable().meta({ description: '`requested` or `consecutive_failures`; null while active' }),
    consecutive_failures: z.number(),
    created_at: Timestamp,
    updated_at: Timestamp
  })
  .meta({ id: 'WebhookEndpoint' })
type WebhookView = z.infer<typeof WebhookEndpoint>

/** A sealed field of an endpoint, unsealed (`[erased]` once the key is destroyed); one written before it was sealed as is. */
async function opened(rt: HttpRuntime, owner: string, value: string | null): Promise<string | null> {
  if (value === null || !value.startsWith('sealed:')) return value
  return (await rt.ctx.sealer.unseal(owner, value)) ?? ERASED
}

/** The public view of an endpoint: never its secret; its URL and description unsealed. */
async function webhookView(rt: HttpRuntime, w: WebhookDoc): Promise<WebhookView> {
  return {
    uuid: w.uuid,
    environment: w.environment,
    url: (await opened(rt, w.user_uuid, w.url)) ?? '',
    events: w.events,
    description: await opened(rt, w.user_uuid, w.description),
    status: w.status,
    disabled_reason: w.disabled_reason,
    consecutive_failures: w.consecutive_failures,
    created_at: w.created_at,
    updated_at: w.updated_at
  }
}

/** One delivery attempt as `GET /api/webhooks/{uuid}/deliveries` lists it (docs/interface.md §6, rule 5). */
const Attempt = z
  .object({
    delivery_uuid: z.string(),
    event: z.string(),
    job_uuid: z.string(),
    attempt: z.number(),
    response_status: z.number().nullable().meta({ description: 'null when no answer came (see `error`)' }),
    succeeded: z.boolean(),
    error: z.string().nullable(),
    duration_ms: z.number(),
    test: z.boolean(),
    timestamp: Timestamp
  })
  .meta({ id: 'WebhookAttempt' })

function attemptView(a: WebhookAttemptDoc): z.infer<typeof Attempt> {
  return {
    delivery_uuid: a.delivery_uuid,
    event: a.event,
    job_uuid: a.job_uuid,
    attempt: a.attempt,
    response_status: a.response_status,
    succeeded: a.succeeded,
    error: a.error,
    duration_ms: a.duration_ms,
    test: a.test,
    timestamp: a.attempted_at
  }
}

const CreateWebhook = z
  .object({
    url: z.string().max(4096),
    events: z.array(z.string().max(100)).max(32),
    description: z.string().max(4096).nullable().optional()
  })
  .strict()
  .meta({ examples: [{ url: 'https://hooks.example.com/verification', events: ['job.completed'], description: 'CRM' }] })

const UpdateWebhook = z
  .object({
    url: z.string().max(4096).optional(),
    events: z.array(z.string().max(100)).max(32).optional(),
    description: z.string().max(4096).nullable().optional(),
    status: z.string().max(100).optional().meta({ description: '`active` (re-enables and clears the failure count) or `disabled`' })
  })
  .strict()

const TestOutcome = z.object({
  delivery_uuid: z.string(),
  delivered: z.boolean(),
  response_status: z.number().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number()
})

/** Webhooks (docs/interface.md §4 "Webhooks", section 6). Auth A with the `webhooks:*` scopes. */
export function webhookRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const policy = rt.ctx.config.webhooks
  const send = rt.send_webhook
  /** The caller's endpoint `uuid`. @throws HttpProblem 404 for an unknown endpoint, another account's or another environment's (issue 42 item 10). */
  const ownEndpoint = async (uuid: string, p: Principal): Promise<WebhookDoc> => {
    const doc = await getWebhook(rt.ctx, uuid)
    const sees = environmentOf(p)
    if (!doc || doc.user_uuid !== p.user_uuid || (sees !== null && doc.environment !== sees))
      throw new HttpProblem(404, 'webhook.not_found', 'no such webhook endpoint')
    return doc
  }
  const tags = ['Webhooks']

  app.route({
    method: 'GET',
    url: '/api/webhooks',
    config: { auth: 'any', scope: 'webhooks:read' },
    schema: {
      operationId: 'listWebhooks',
      summary: "The account's endpoints, newest first; a key sees its own environment's only",
      tags,
      querystring: EnvironmentQuery,
      response: { 200: z.array(WebhookEndpoint), ...problems(400, 401, 403) }
    },
    handler: async request => {
      const p = principalOf(request)
      const endpoints = await webhooksOf(rt.ctx, p.user_uuid, listedEnvironment(p, request.query.environment, 'list_webhooks'))
      return await Promise.all(endpoints.map(async w => await webhookView(rt, w)))
    }
  })

  app.route({
    method: 'POST',
    url: '/api/webhooks',
    config: { auth: 'any', scope: 'webhooks:create', invalid: 'create_webhook.invalid_request' },
    schema: {
      operationId: 'createWebhook',
      summary: 'Register an endpoint; its signing secret is shown once',
      tags,
      body: CreateWebhook,
      response: {
        201: json(WebhookEndpoint.extend({ secret: z.string().meta({ description: '`whsec_…`, shown once' }) }), 'The endpoint with its signing secret'),
        ...problems(...BODY_PROBLEMS, 401, 403)
      }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      const created = await createWebhook(rt.ctx, { user_uuid: p.user_uuid, environment: p.environment, ...request.body, actor: actorOf(p) })
      await rt.caughtUp(request, created.position)
      const e = created.endpoint
      const view = await webhookView(rt, {
        _id: e.webhook_uuid,
        uuid: e.webhook_uuid,
        user_uuid: e.user_uuid,
        environment: e.environment ?? 'live',
        url: e.url,
        events: e.events,
        description: e.description,
        status: 'active',
        disabled_reason: null,
        consecutive_failures: 0,
        created_at: e.created_at,
        updated_at: e.created_at
      })
      return reply.code(201).send({ ...view, secret: created.secret })
    }
  })

  app.route({
    method: 'GET',
    url: '/api/webhooks/:uuid',
    config: { auth: 'any', scope: 'webhooks:read' },
    schema: {
      operationId: 'getWebhook',
      summary: 'An endpoint',
      tags,
      params: UuidParams,
      response: { 200: WebhookEndpoint, ...problems(400, 401, 403, 404) }
    },
    handler: async request => await webhookView(rt, await ownEndpoint(request.params.uuid, principalOf(request)))
  })

  app.route({
    method: 'PATCH',
    url: '/api/webhooks/:uuid',
    config: { auth: 'any', scope: 'webhooks:update', invalid: 'update_webhook.invalid_request' },
    schema: {
      operationId: 'updateWebhook',
      summary: "Change an endpoint's url, events, description or status",
      tags,
      params: UuidParams,
      body: UpdateWebhook,
      response: { 200: WebhookEndpoint, ...problems(...BODY_PROBLEMS, 401, 403, 404) }
    },
    handler: async request => {
      const p = principalOf(request)
      const body = request.body
      if (body.status !== undefined && body.status !== 'active' && body.status !== 'disabled') {
        throw new DomainError('invalid', 'update_webhook.invalid_status', 'status must be "active" or "disabled"')
      }
      const position = await updateWebhook(
        rt.ctx,
        p.user_uuid,
        environmentOf(p),
        request.params.uuid,
        { ...body, status: body.status as 'active' | 'disabled' | undefined },
        actorOf(p)
      )
      await rt.caughtUp(request, position)
      return await webhookView(rt, await ownEndpoint(request.params.uuid, p))
    }
  })

  app.route({
    method: 'DELETE',
    url: '/api/webhooks/:uuid',
    config: { auth: 'any', scope: 'webhooks:delete' },
    schema: {
      operationId: 'deleteWebhook',
      summary: "Delete an endpoint (idempotent; one the caller does not see, another account's or another environment's, is left alone)",
      tags,
      params: UuidParams,
      response: { 204: NoContent, ...problems(400, 401, 403) }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      await rt.caughtUp(request, await deleteWebhook(rt.ctx, p.user_uuid, environmentOf(p), request.params.uuid, actorOf(p)))
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'GET',
    url: '/api/webhooks/:uuid/deliveries',
    config: { auth: 'any', scope: 'webhooks:read', invalid: 'request.invalid_pagination' },
    schema: {
      operationId: 'listWebhookDeliveries',
      summary: 'Every delivery attempt to an endpoint, newest first',
      tags,
      params: UuidParams,
      querystring: PageQuery,
      response: { 200: Paginated(Attempt), ...problems(400, 401, 403, 404) }
    },
    handler: async request => {
      const p = principalOf(request)
      const { limit, offset } = request.query
      await ownEndpoint(request.params.uuid, p)
      const { items, total } = await attemptsOf(rt.ctx, request.params.uuid, { limit, offset })
      return { items: items.map(attemptView), total, limit, offset }
    }
  })

  app.route({
    method: 'POST',
    url: '/api/webhooks/:uuid/test',
    config: { auth: 'any', scope: 'webhooks:update' },
    schema: {
      operationId: 'testWebhook',
      summary: 'Send one signed sample delivery now',
      tags,
      params: UuidParams,
      response: { 200: TestOutcome, ...problems(400, 401, 403, 404) }
    },
    handler: async request => {
      const p = principalOf(request)
      const r = await testWebhook(rt.ctx, p.user_uuid, environmentOf(p), request.params.uuid, send, policy)
      rt.metrics.webhookAttempts.inc({ outcome: 'test' })
      await rt.caughtUp(request, r.position)
      return { delivery_uuid: r.delivery_uuid, delivered: r.delivered, response_status: r.response_status, error: r.error, duration_ms: r.duration_ms }
    }
  })
}
