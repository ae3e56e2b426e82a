import Fastify, { type FastifyInstance } from 'fastify'
import cookie from '@fastify/cookie'
import { registerErrorHandling } from './plugins/errors.ts'
import { authRoutes } from './routes/auth.ts'
import { configRoutes } from './routes/config.ts'
import { walletRoutes } from './routes/wallet.ts'
import { keyRoutes } from './routes/keys.ts'
import { agentRoutes } from './routes/agents.ts'
import { webhookRoutes } from './routes/webhooks.ts'
import { verifyRoutes } from './routes/verify.ts'
import { userRoutes } from './routes/users.ts'
import type { HttpRuntime } from './runtime.ts'

/**
 * Builds the Fastify app: problem+json errors, cookies, and one route module per resource.
 * `logger` is a pino options object or false.
 */
export async function buildApp (rt: HttpRuntime, options: { logger: boolean | Record<string, unknown> }): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger === false ? false : { ...(options.logger === true ? {} : options.logger), redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'] },
    bodyLimit: 1024 * 1024,
    trustProxy: false,
    return503OnClosing: true
  })
  registerErrorHandling(app)
  await app.register(cookie)
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async (_req, reply) => rt.ready() ? { status: 'ready' } : reply.code(503).send({ status: 'starting' }))
  configRoutes(app)
  authRoutes(app, rt)
  walletRoutes(app, rt)
  keyRoutes(app, rt)
  agentRoutes(app, rt)
  webhookRoutes(app, rt)
  verifyRoutes(app, rt)
  userRoutes(app, rt)
  return app
}

/** A role without the API (relay, workers): only `/healthz` and `/readyz`. */
export async function buildHealthApp (ready: () => boolean): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, return503OnClosing: true })
  registerErrorHandling(app)
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async (_req, reply) => ready() ? { status: 'ready' } : reply.code(503).send({ status: 'starting' }))
  return app
}
