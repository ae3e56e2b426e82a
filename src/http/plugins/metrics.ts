import type { FastifyInstance, FastifyRequest } from 'fastify'
import Fastify from 'fastify'
import { timingSafeEqual } from 'node:crypto'
import type { Metrics } from '../../ports/metrics.ts'
import { problem, sendProblem } from '../problem.ts'

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * Whether `request` bears the operator's token (`Authorization: Bearer <METRICS_TOKEN>`,
 * compared in constant time); always false without a token configured.
 */
export function bearsMetricsToken(request: FastifyRequest, token: string | null): boolean {
  if (token === null) return false
  const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')
  return m !== null && sameSecret(m[1], token)
}

/**
 * Metrics of one role: every answer's duration is observed by route pattern and status,
 * and with `token` (`METRICS_TOKEN`) the app serves `GET /metrics` to a bearer of that
 * token (401 otherwise); without it the route does not exist (not public by default).
 */
export function metricsPlugin(app: FastifyInstance, metrics: Metrics, token: string | null): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.http.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000)
  })
  if (token === null) return
  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
    if (!bearsMetricsToken(request, token))
      return sendProblem(reply, problem(401, 'metrics.unauthorized', 'GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`'))
    return reply.type(metrics.contentType).send(await metrics.text())
  })
}

/**
 * `METRICS_PORT`: `GET /metrics` without a token on a port of its own (bound to `host`),
 * for a scraper on a private network. @returns the server, to close with the role.
 */
export async function startMetricsServer(metrics: Metrics, host: string, port: number): Promise<{ url: string; close: () => Promise<void> }> {
  const server = Fastify({ logger: false })
  server.get('/metrics', async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()))
  const url = await server.listen({ host, port })
  return {
    url,
    close: async () => {
      await server.close()
    }
  }
}
