import type { FastifyInstance, FastifyError } from 'fastify'
import { DomainError, type ErrorKind } from '../../domain/shared.ts'
import { DEFAULT_RETRY_AFTER_S, HttpProblem, problem, sendProblem } from '../problem.ts'
import { AppendTooLargeError, WrongExpectedRevisionError } from '../../ports/event-store.ts'
import { BillingUnavailableError, InvalidWebhookError } from '../../ports/billing.ts'
import { StoreUnavailableError } from '../../ports/store-unavailable.ts'

/** Seconds a client is asked to wait when the database does not answer: a restart or a failover takes a few. */
const STORE_RETRY_AFTER_S = 5

const STATUS_OF: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  locked: 429
}

/** Where a request failed its route's schema (`FastifyError.validationContext`), and the code it is answered with. */
function validationCode(context: string | undefined, routeCode: string | undefined): string {
  if (context === 'params') return 'request.invalid_uuid'
  return routeCode ?? (context === 'querystring' ? 'request.invalid_query' : 'request.invalid_request')
}

/**
 * The one error handler: a request that fails its route's schema is a 400 with the
 * route's code (`config.invalid`; a malformed `{uuid}` is `request.invalid_uuid`) and one
 * `errors` entry per field; domain errors and HTTP problems map to their status with
 * their machine code; a store that does not answer is a 503 `store.unreachable` with
 * `Retry-After`; Fastify's own client errors (bad JSON, wrong content type, body
 * too large) keep their 4xx; anything else is logged and answered 500 without details.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  // Every 429 says when to come back (RFC 9110 §10.2.3; the document declares Retry-After on each): the refusal's own figure, else a minute.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 429 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(DEFAULT_RETRY_AFTER_S))
    return payload
  })
  app.setErrorHandler((err: FastifyError | Error, request, reply) => {
    const validation = (err as FastifyError).validation
    if (validation) {
      const errors = validation.map(v => ({ path: v.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(body)', message: v.message ?? 'invalid' }))
      const code = validationCode((err as FastifyError).validationContext, request.routeOptions.config.invalid)
      return sendProblem(reply, problem(400, code, `invalid request: ${errors.map(e => `${e.path}: ${e.message}`).join('; ')}`, errors))
    }
    if (err instanceof HttpProblem) {
      if (err.retry_after_s !== undefined) reply.header('retry-after', String(err.retry_after_s))
      return sendProblem(reply, problem(err.status, err.code, err.message, err.errors))
    }
    if (err instanceof DomainError) return sendProblem(reply, problem(STATUS_OF[err.kind], err.code, err.message))
    if (err instanceof BillingUnavailableError) {
      request.log.warn({ err }, 'billing unavailable')
      return sendProblem(reply, problem(503, 'billing.unavailable', 'billing is unavailable right now; try again later'))
    }
    if (err instanceof StoreUnavailableError) {
      // Not a fault of ours to page about for each request: /readyz and the store's own log say it once.
      request.log.warn({ store: err.store, detail: err.message }, 'store unreachable')
      reply.header('retry-after', String(STORE_RETRY_AFTER_S))
      return sendProblem(
        reply,
        problem(503, 'store.unreachable', `the service cannot reach its database right now; try again in ${STORE_RETRY_AFTER_S} seconds`)
      )
    }
    if (err instanceof AppendTooLargeError) {
      // The store's write limit is the operator's to raise (KurrentDB's MaxAppendSize); the customer can send less at once.
      request.log.warn({ stream: err.stream, limit_bytes: err.limit_bytes }, 'append over the event store limit')
      return sendProblem(
        reply,
        problem(
          413,
          'request.append_too_large',
          `this request makes more than the event store takes in one write (${err.limit_bytes} bytes); send fewer addresses at once`
        )
      )
    }
    if (err instanceof InvalidWebhookError) return sendProblem(reply, problem(400, 'billing_webhook.invalid_signature', err.message))
    if (err instanceof WrongExpectedRevisionError) {
      // Still contended after the command handler's retries: nothing was written; try again.
      reply.header('retry-after', '1')
      return sendProblem(
        reply,
        problem(409, 'request.concurrent_update', 'the resource was being changed by another request at the same time; nothing was changed, try again')
      )
    }
    const status = (err as FastifyError).statusCode
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const code = status === 413 ? 'request.body_too_large' : status === 415 ? 'request.unsupported_media_type' : 'request.malformed_body'
      return sendProblem(reply, problem(status, code, err.message))
    }
    request.log.error({ err }, 'unhandled error')
    return sendProblem(reply, problem(500, 'internal_error', 'an unexpected error occurred; it has been logged'))
  })
  app.setNotFoundHandler((request, reply) => sendProblem(reply, problem(404, 'route.not_found', `no route ${request.method} ${request.url.split('?')[0]}`)))
}
