import type { FastifyInstance, FastifyRequest } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import type { RateCounter } from '../../infra/ratelimit/port.ts'
import { HttpProblem } from '../problem.ts'
import { problems } from '../schemas.ts'

/** The credential a request is counted under: its API key, agent or OAuth grant; sessions and public routes are not limited. */
function limitedKey (request: FastifyRequest): string | null {
  const p = request.principal
  if (p?.kind === 'api_key') return `key_${p.key_uuid}`
  if (p?.kind === 'agent') return `agent_${p.agent_uuid}`
  if (p?.kind === 'oauth') return `grant_${p.session_uuid}`
  return null
}

/**
 * Per-key and per-agent-token rate limits (interface section 8: seeded from the plan,
 * realigned when the plan changes), with `@fastify/rate-limit` counting into `counter`
 * (in process on the embedded default, NATS key-value across `svc api` processes). The
 * limit is the caller's plan's now, read at authentication, so a plan change applies to
 * the next request. Every answer to a limited credential carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds); past the limit it is a 429
 * problem with `Retry-After`. Counted after authentication (the auth plugin's `onRequest`
 * runs first), before the body is validated: a malformed request counts too. Every route
 * a key or agent can call declares its 429.
 */
export async function rateLimitPlugin (app: FastifyInstance, counter: RateCounter, windowS: number): Promise<void> {
  const windowMs = windowS * 1000
  app.addHook('onRoute', route => {
    const auth = route.config?.auth
    if (auth !== 'any' && auth !== 'api_key') return
    const schema = (route.schema ??= {}) as { response?: Record<number, unknown> }
    schema.response = { ...problems(429), ...schema.response }
  })
  class Store {
    incr (key: string, cb: (err: Error | null, res?: { current: number, ttl: number }) => void): void {
      counter.hit(key, windowMs).then(r => { cb(null, { current: r.count, ttl: r.reset_ms }) }, err => { cb(err as Error) })
    }

    child (): Store { return this }
  }
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    enableDraftSpec: true,
    timeWindow: windowMs,
    keyGenerator: request => limitedKey(request) ?? 'unlimited',
    allowList: request => limitedKey(request) === null,
    max: request => request.principal!.plan.rate_limit_per_minute,
    store: Store as never,
    errorResponseBuilder: (_request, context) => new HttpProblem(429, 'rate_limit.exceeded', `rate limit of ${context.max} requests per window reached; retry in ${context.after}`)
  })
}
