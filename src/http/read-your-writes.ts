import type { FastifyInstance, FastifyRequest } from 'fastify'

/** Requests whose answer went out before the read models had applied their write. */
const stale = new WeakSet<FastifyRequest>()

/**
 * Marks `request`'s answer as given before the read models had applied its write (the
 * read-your-writes wait gave up after its bound): the answer is what they showed then.
 */
export function answeredStale(request: FastifyRequest): void {
  stale.add(request)
}

/**
 * `Read-Your-Writes: timeout` on every answer marked by `answeredStale`, so a client knows
 * that a read right after may not show its write yet (docs/api-conventions: retry the read).
 */
export function readYourWritesHeader(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    if (stale.has(request)) reply.header('read-your-writes', 'timeout')
  })
}
