import type { FastifyInstance, FastifyRequest } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import type { RateCounter } from '../../ports/rate-limit.ts'
import { HttpProblem } from '../problem.ts'
import { problems } from '../schemas.ts'

/**
 * Public operations counted per client address: the reads that take no credential
 * (configuration, metadata, statistics, health, the authorization page) and sign-out. The
 * public writes (sign-up, sign-in, recovery, OAuth token and registration) have throttles
 * of their own; Stripe's webhook is not limited (Stripe retries what is refused).
 */
function isPublicLimited(method: string, url: string, auth: string | undefined): boolean {
  return auth === 'none' && (method === 'GET' || method === 'HEAD' || url === '/api/auth/logout')
}

/**
 * How many times a key's rate a session gets (issue 42, item 4): the console is a person's,
 * whose pages ask several things at once and whose lists page asks every second while a
 * list runs, all on one count per account (Free: 600 a minute, against a key's 60).
 */
const SESSION_RATE_FACTOR = 10

/**
 * What a request is counted under: its API key, agent or OAuth grant, its account for a
 * session (all the account's sessions on one count: signing in again makes no new one), or
 * its client address on a public read.
 */
function limitedKey(request: FastifyRequest): string | null {
  const p = request.principal
  if (p?.kind === 'api_key') return `key_${p.key_uuid}`
  if (p?.kind === 'session') return `account_${p.user_uuid}`
  if (p?.kind === 'agent') return `agent_${p.agent_uuid}`
  if (p?.kind === 'oauth') return `grant_${p.session_uuid}`
  if (p === null && isPublicLimited(request.method, request.routeOptions.url ?? '', request.routeOptions.config.auth)) return `client_${request.ip}`
  return null
}

/**
 * Per-key, per-agent-token and per-account session rate limits (docs/interface.md §8: seeded
 * from the plan, realigned when the plan changes; a session's is `SESSION_RATE_FACTOR` times
 * the plan's, counted per account), with `@fastify/rate-limit` counting into `counter`
 * (in process on the embedded default, NATS key-value across `svc api` processes). The
 * limit is the caller's plan's now, read at authentication, so a plan change applies to
 * the next request. Every answer to a limited caller carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds); past the limit it is a 429
 * problem with `Retry-After`. Counted after authentication (the auth plugin's `onRequest`
 * runs first), before the body is validated: a malformed request counts too. Every route
 * a credential can call declares its 429. Public reads are counted per client address
 * (`PUBLIC_RATE_LIMIT_PER_MINUTE`, 600 by default), in the same store.
 */
export async function rateLimitPlugin(app: FastifyInstance, counter: RateCounter, windowS: number, publicPerMinute: number): Promise<void> {
  const windowMs = windowS * 1000
  app.addHook('onRoute', route => {
    const auth = route.config?.auth
    const methods = ([] as string[]).concat(route.method)
    if (auth !== 'any' && auth !== 'api_key' && auth !== 'jwt' && !methods.some(m => isPublicLimited(m, route.url, auth))) return
    const schema = (route.schema ??= {}) as { response?: Record<number, unknown> }
    schema.response = { ...problems(429), ...schema.response }
  })
  class Store {
    incr(key: string, cb: (err: Error | null, res?: { current: number; ttl: number }) => void): void {
      counter.hit(key, windowMs).then(
        r => {
          cb(null, { current: r.count, ttl: r.reset_ms })
        },
        err => {
          cb(err as Error)
        }
      )
    }

    child(): Store {
      return this
    }
  }
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    enableDraftSpec: true,
    timeWindow: windowMs,
    keyGenerator: request => limitedKey(request) ?? 'unlimited',
    allowList: request => limitedKey(request) === null,
    // A key's or agent's plan's limit per window, ten times it for an account's sessions; a public read's per client, scaled to the window.
    max: request => {
      const p = request.principal
      if (p === null) return Math.max(1, Math.round((publicPerMinute * windowS) / 60))
      return p.kind === 'session' ? p.plan.rate_limit_per_minute * SESSION_RATE_FACTOR : p.plan.rate_limit_per_minute
    },
    store: Store as never,
    errorResponseBuilder: (_request, context) =>
      new HttpProblem(429, 'rate_limit.exceeded', `rate limit of ${context.max} requests per window reached; retry in ${context.after}`)
  })
}
