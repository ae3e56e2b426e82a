import { randomUUID } from 'node:crypto'
import { readYourWritesHeader } from './read-your-writes.ts'
import { readFileSync } from 'node:fs'
import type { Server } from 'node:http'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import helmet from '@fastify/helmet'
import cookie from '@fastify/cookie'
import cors from '@fastify/cors'
import { z } from 'zod'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { jsonBodyPlugin } from './plugins/json-body.ts'
import { registerErrorHandling } from './plugins/errors.ts'
import { authPlugin } from './plugins/auth.ts'
import { rateLimitPlugin } from './plugins/rate-limit.ts'
import { openapiPlugin } from './plugins/openapi.ts'
import { bearsMetricsToken, metricsPlugin } from './plugins/metrics.ts'
import { turnsPlugin } from './plugins/turns.ts'
import { authRoutes } from './routes/auth.ts'
import { signInRoutes } from './routes/sign-in.ts'
import { configRoutes } from './routes/config.ts'
import { billingPaymentRoutes, billingRoutes } from './routes/billing.ts'
import { walletRoutes } from './routes/wallet.ts'
import { keyRoutes } from './routes/api-keys.ts'
import { agentRoutes } from './routes/agents.ts'
import { webhookRoutes } from './routes/webhooks.ts'
import { verifyRoutes } from './routes/verify.ts'
import { userRoutes } from './routes/users.ts'
import { jobRoutes } from './routes/jobs.ts'
import { batchRoutes } from './routes/batches.ts'
import { statsRoutes } from './routes/stats.ts'
import { notificationRoutes } from './routes/notifications.ts'
import { oauthRoutes } from './routes/oauth.ts'
import { mcpRoutes } from './routes/mcp.ts'
import { consoleRoutes } from './routes/console.ts'
import { batchSourceRoutes } from './routes/batch-sources.ts'
import { listPreviewRoutes } from './routes/list-preview.ts'
import { referenceRoutes } from './routes/reference.ts'
import { problems } from './schemas.ts'
import type { Metrics } from '../ports/metrics.ts'
import type { HttpRuntime, Readiness } from './runtime.ts'

export interface AppOptions {
  /** A pino options object, or false. */
  logger: boolean | Record<string, unknown>
  /** The process's (redacting) logger: errors and 500s are logged through it (overrides `logger`). */
  logger_instance?: FastifyBaseLogger
  /** Test builds: hooks added before the routes (a check of every response against its schema). */
  instrument?: (app: FastifyInstance) => void
}

/** The endpoints a browser-based OAuth/MCP client calls cross-origin (besides `/.well-known/…`). */
const CORS_PATHS = new Set(['/oauth/register', '/oauth/token', '/oauth/revoke', '/mcp'])

/**
 * Routes every role answers: liveness and readiness. `/readyz` is public (load balancers
 * and the console ask it without a credential) and says which part is not ready and why
 * (`component`, `problem`); what was seen (`detail`: a proxy's address, the self-test MX, a
 * resolver's or a store's error) is operators' infrastructure, given only to a bearer of
 * `METRICS_TOKEN` (null for anyone else, and when no token is set: the log and
 * `svc doctor` have it).
 */
function healthRoutes(fastify: FastifyInstance, ready: () => Readiness, metricsToken: string | null): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const Status = z.object({ status: z.string() })
  const NotReadyBody = z.object({
    status: z.enum(['starting', 'degraded']),
    reasons: z.array(
      z.object({
        component: z.string().meta({ description: '`postgresql`, `projections`, `relay`, `egress`, …' }),
        problem: z
          .string()
          .meta({ description: '`unreachable`, `starting`, `catching_up`, `resubscribing`, `dns_failing`, `port_25_blocked`, `proxy_failing`' }),
        detail: z.string().nullable().meta({ description: 'what was seen: only with `Authorization: Bearer <METRICS_TOKEN>`, else null' })
      })
    )
  })
  app.route({
    method: 'GET',
    url: '/healthz',
    config: { auth: 'none' },
    schema: { operationId: 'health', summary: 'Liveness', tags: ['Service'], response: { 200: Status, ...problems() } },
    handler: async () => ({ status: 'ok' })
  })
  app.route({
    method: 'GET',
    url: '/readyz',
    config: { auth: 'none' },
    schema: {
      operationId: 'readiness',
      summary: 'Readiness: the database answering, read models caught up, the relay subscribed, egress to port 25 working (else 503 with the reasons)',
      tags: ['Service'],
      response: { ...problems(), 200: z.object({ status: z.literal('ready') }), 503: NotReadyBody }
    },
    handler: async (request, reply) => {
      const r = ready()
      if (r.status === 'ready') return { status: 'ready' as const }
      const operator = bearsMetricsToken(request, metricsToken)
      return reply.code(503).send({ status: r.status, reasons: r.reasons.map(n => ({ ...n, detail: operator ? n.detail : null })) })
    }
  })
}

/** Where credentials sit in what is logged: never written out (docs/design/architecture.md: secrets are never logged). */
export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.current_password',
  '*.new_password',
  '*.token',
  '*.temp_token',
  '*.raw_key',
  '*.refresh_token',
  '*.access_token',
  '*.code',
  '*.secret',
  '*.code_verifier',
  '*.csrf',
  '*.req'
]

/** An incoming X-Request-Id kept as the request's id: 1–128 characters of letters, digits and `._:-` (anything else could forge log lines or fill them). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The base of every role's app: zod validation and serialization, problem+json errors.
 * `trustProxy` (`TRUST_PROXY`): whose `X-Forwarded-For` makes `request.ip`, the key of every
 * per-client limit; false (the default) believes nobody's.
 */
function base(options: AppOptions, metrics: Metrics, metricsToken: string | null, trustProxy: false | string[] = false): FastifyInstance {
  const app = Fastify({
    ...(options.logger_instance
      ? { loggerInstance: options.logger_instance, logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }) }
      : {
          logger: options.logger === false ? false : { ...(options.logger === true ? {} : options.logger), redact: REDACT },
          logController: new LogController({ requestIdLogLabel: 'request_id' })
        }),
    bodyLimit: 1024 * 1024,
    trustProxy,
    return503OnClosing: true,
    // Every log line of a request carries its id: the caller's X-Request-Id when it is a
    // plain token (a proxy's or the client's, so both ends' logs join), else a new one.
    requestIdHeader: false,
    genReqId: request => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
    }
  })
  // First: under a flood, a turn of the event loop starts a bounded number of requests, fairly between clients.
  turnsPlugin(app)
  // The answer says which request it was.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  // JSON operations take JSON: a text/plain body is a 415 as their documents declare, not a
  // string that fails the schema (400). Fastify's built-in text parser is the only other one.
  app.removeContentTypeParser('text/plain')
  jsonBodyPlugin(app)
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  registerErrorHandling(app)
  metricsPlugin(app, metrics, metricsToken)
  options.instrument?.(app)
  return app
}

/**
 * Builds the API app: every route declares its params, query, body and each response
 * status with zod (validation, serialization and `GET /openapi.json` from one
 * declaration), authentication and scope are route configuration read by one plugin,
 * errors are problem+json, `GET /docs` renders the document, `GET /metrics` with
 * `METRICS_TOKEN`.
 */
export async function buildApp(rt: HttpRuntime, options: AppOptions): Promise<FastifyInstance> {
  const app = base(options, rt.metrics, rt.ctx.config.metrics.token, rt.ctx.config.trust_proxy)
  await app.register(cookie)
  // Security headers (OWASP ASVS 5.0 V3.4): a JSON API renders nothing, so its documents may load nothing and be framed nowhere; /docs sets its own policy.
  // X-Frame-Options DENY says what every page's `frame-ancestors 'none'` says, to browsers that read only the older header (helmet's default is SAMEORIGIN).
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    frameguard: { action: 'deny' }
  })
  // A write answered before the read models had it says so (HttpRuntime.caughtUp).
  readYourWritesHeader(app)
  // Answers carry personal data and credentials: no shared or browser cache keeps them (ASVS 5.0 V14.3.2).
  app.addHook('onSend', async (request, reply) => {
    if (request.url.startsWith('/api/') && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
  })
  // Browser-based MCP clients discover, register, exchange codes and call /mcp from other
  // origins: CORS on those endpoints only (no cookies travel: `credentials` off), answered
  // before authentication so that a 401's WWW-Authenticate is readable. Never on the
  // consent page or the API.
  await app.register(cors, {
    delegator: (request, done) => {
      const path = (request.url ?? '').split('?')[0]
      done(
        null,
        CORS_PATHS.has(path) || path.startsWith('/.well-known/')
          ? {
              origin: '*',
              methods: ['GET', 'POST'],
              allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Session-Id'],
              exposedHeaders: ['WWW-Authenticate', 'Mcp-Session-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'],
              maxAge: 600
            }
          : { origin: false }
      )
    }
  })
  authPlugin(app, rt.ctx)
  await rateLimitPlugin(app, rt.rate_counter, rt.ctx.config.rate_limit_window_s, rt.ctx.config.public_rate_limit_per_minute)
  await openapiPlugin(app, () => rt.ctx.base_url())
  healthRoutes(app, rt.ready, rt.ctx.config.metrics.token)
  configRoutes(
    app,
    rt.ctx.config.plans,
    rt.ctx.config.billing.stripe_secret_key !== null,
    rt.ctx.config.smtp_url === null ? 'outbox' : 'smtp',
    Math.round(rt.ctx.config.verifier.egress_hold_ms / 1000)
  )
  authRoutes(app, rt)
  signInRoutes(app, rt)
  walletRoutes(app, rt)
  billingRoutes(app, rt)
  billingPaymentRoutes(app, rt)
  keyRoutes(app, rt)
  agentRoutes(app, rt)
  webhookRoutes(app, rt)
  verifyRoutes(app, rt)
  userRoutes(app, rt)
  jobRoutes(app, rt)
  batchRoutes(app, rt)
  statsRoutes(app, rt)
  notificationRoutes(app, rt)
  await oauthRoutes(app, rt)
  await mcpRoutes(app, rt)
  batchSourceRoutes(app, rt)
  listPreviewRoutes(app, rt)
  referenceRoutes(app)
  await consoleRoutes(app)
  return app
}

/** How long a client may take to send a request's headers (ms): a slow sender (slowloris) is cut off after it. */
const HEADERS_TIMEOUT_MS = 20_000
/** How long an idle keep-alive connection is kept (ms): above the 60 s of the usual load balancers, so they close first (fastify's default). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000
/** A connection with no byte either way for this long is closed (ms): far above the longest wait (30 s) and a merge's quiet spells. */
const IDLE_TIMEOUT_MS = 300_000
/** Descriptors kept for the process's own files (stores, kept files, workers) when connections are bounded by the descriptor limit. */
const RESERVED_DESCRIPTORS = 256

/** This process's soft limit on open descriptors (RLIMIT_NOFILE, from /proc/self/limits), or null where it cannot be read. */
function descriptorLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    return m && m[1] !== 'unlimited' ? Number(m[1]) : null
  } catch {
    return null
  }
}

/**
 * Bounds what one HTTP server holds of its clients (issue 42, item 4): at most
 * `max_connections` connections at once — lowered to the process's descriptor limit less
 * 256, so that sockets never take the descriptors its stores and files need; more are closed
 * as they come — headers within 20 s, a whole request within `request_timeout_s` (both
 * answered 408 and closed), an idle keep-alive connection closed after 72 s, and any
 * connection without a byte either way for 300 s. Set before `listen`.
 * @returns the connection bound in force.
 */
export function boundServer(server: Server, bounds: { max_connections: number; request_timeout_s: number }): number {
  const fds = descriptorLimit()
  const max = fds === null ? bounds.max_connections : Math.max(16, Math.min(bounds.max_connections, fds - RESERVED_DESCRIPTORS))
  server.maxConnections = max
  server.requestTimeout = bounds.request_timeout_s * 1000
  server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, server.requestTimeout)
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  server.setTimeout(IDLE_TIMEOUT_MS)
  return max
}

/** A role without the API (relay, workers): `/healthz`, `/readyz` and `/metrics`. */
export async function buildHealthApp(ready: () => Readiness, metrics: Metrics, metricsToken: string | null): Promise<FastifyInstance> {
  const app = base({ logger: false }, metrics, metricsToken)
  healthRoutes(app, ready, metricsToken)
  return app
}
