import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { createWebhook, deleteWebhook, updateWebhook } from '../../commands/webhook-endpoints.ts'
import { testWebhook } from '../../commands/webhook-deliveries.ts'
import { DomainError } from '../../domain/shared.ts'
import type { WebhookAttemptDoc, WebhookDoc } from '../../projections/webhooks.ts'
import { webhookSender } from '../../infra/webhooks/sender.ts'
import { actorOf, authenticate, requireScope } from '../plugins/auth.ts'
import { paginated, parsePage } from '../pagination.ts'
import { HttpProblem, parseUuid, parseWith } from '../problem.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The public view of an endpoint: never its secret. */
export function webhookView (w: WebhookDoc): Record<string, unknown> {
  return {
    uuid: w.uuid,
    url: w.url,
    events: w.events,
    description: w.description,
    status: w.status,
    disabled_reason: w.disabled_reason,
    consecutive_failures: w.consecutive_failures,
    created_at: w.created_at,
    updated_at: w.updated_at
  }
}

/** One delivery attempt as `GET /api/webhooks/{uuid}/deliveries` lists it (interface section 6, rule 5). */
function attemptView (a: WebhookAttemptDoc): Record<string, unknown> {
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

const CreateWebhook = z.object({
  url: z.string().max(4096),
  events: z.array(z.string().max(100)).max(32),
  description: z.string().max(4096).nullable().optional()
}).strict()

const UpdateWebhook = z.object({
  url: z.string().max(4096).optional(),
  events: z.array(z.string().max(100)).max(32).optional(),
  description: z.string().max(4096).nullable().optional(),
  status: z.string().max(100).optional()
}).strict()

/** Webhooks (interface section 4 "Webhooks", section 6). Auth A with the `webhooks:*` scopes. */
export function webhookRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  const policy = rt.ctx.config.webhooks
  const send = webhookSender({ timeout_ms: policy.timeout_ms, allow_private: policy.allow_private_targets })
  const hooks = () => rt.ctx.reads.collection<WebhookDoc>('webhooks')
  const ownEndpoint = async (uuid: string, owner: string): Promise<WebhookDoc> => {
    const doc = await hooks().get(uuid)
    if (!doc || doc.user_uuid !== owner) throw new HttpProblem(404, 'webhook.not_found', 'no such webhook endpoint')
    return doc
  }
  const pathUuid = (params: unknown): string => parseUuid((params as { uuid?: string }).uuid)

  app.get('/api/webhooks', async request => {
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'webhooks:read')
    const { items } = await hooks().find({ user_uuid: p.user_uuid }, { sort: { created_at: -1 } })
    return items.map(webhookView)
  })

  app.post('/api/webhooks', async (request, reply) => {
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'webhooks:create')
    const body = parseWith(CreateWebhook, request.body, 'create_webhook.invalid_request')
    const created = await createWebhook(rt.ctx, { user_uuid: p.user_uuid, ...body, actor: actorOf(p) })
    await rt.caughtUp(created.position)
    const doc = await hooks().get(created.webhook_uuid)
    return reply.code(201).send({ ...(doc ? webhookView(doc) : { uuid: created.webhook_uuid }), secret: created.secret })
  })

  app.get('/api/webhooks/:uuid', async request => {
    const uuid = pathUuid(request.params)
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'webhooks:read')
    return webhookView(await ownEndpoint(uuid, p.user_uuid))
  })

  app.patch('/api/webhooks/:uuid', async request => {
    const uuid = pathUuid(request.params)
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'webhooks:update')
    const body = parseWith(UpdateWebhook, request.body, 'update_webhook.invalid_request')
    if (body.status !== undefined && body.status !== 'active' && body.status !== 'disabled') {
      throw new DomainError('invalid', 'update_webhook.invalid_status', 'status must be "active" or "disabled"')
    }
    const position = await updateWebhook(rt.ctx, p.user_uuid, uuid, { ...body, status: body.status as 'active' | 'disabled' | undefined }, actorOf(p))
    await rt.caughtUp(position)
    return webhookView(await ownEndpoint(uuid, p.user_uuid))
  })

  app.delete('/api/webhooks/:uuid', async (request, reply) => {
    const uuid = pathUuid(request.params)
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'webhooks:delete')
    await rt.caughtUp(await deleteWebhook(rt.ctx, p.user_uuid, uuid, actorOf(p)))
    return reply.code(204).send()
  })

  app.get('/api/webhooks/:uuid/deliveries', async request => {
    const uuid = pathUuid(request.params)
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'webhooks:read')
    const page = parsePage(request.query)
    await ownEndpoint(uuid, p.user_uuid)
    const { items, total } = await rt.ctx.reads.collection<WebhookAttemptDoc>('webhook_attempts')
      .find({ webhook_uuid: uuid, user_uuid: p.user_uuid }, { sort: { attempted_at: -1 }, limit: page.limit, offset: page.offset })
    return paginated(items.map(attemptView), total, page)
  })

  app.post('/api/webhooks/:uuid/test', async request => {
    const uuid = pathUuid(request.params)
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'webhooks:update')
    const r = await testWebhook(rt.ctx, p.user_uuid, uuid, send, policy)
    await rt.caughtUp(r.position)
    return { delivery_uuid: r.delivery_uuid, delivered: r.delivered, response_status: r.response_status, error: r.error, duration_ms: r.duration_ms }
  })
}
