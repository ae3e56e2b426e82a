import type { FastifyInstance } from 'fastify'

/**
 * Requests a turn of the event loop starts at most (issue 42, item 4). Each costs about
 * 0.3–0.5 ms until it is answered (authentication's reads, the answer written), so a turn
 * that starts 64 spends some 30 ms before the loop reads its sockets again.
 */
const PER_TURN = 64

/**
 * Shares the event loop fairly between clients under a flood. Node reads every socket that
 * has data in one turn of its loop and, left alone, handles each request it finds there in
 * that same turn: a thousand connections of one client, each with a request waiting, hold
 * the loop for a thousand requests' work (0.4 s and more) before anyone else's request is
 * even read. Here a turn starts at most 64 requests; the rest wait in one queue per client
 * address and are started in later turns, one client after another (round robin), so a
 * request from another client is started within a turn or two whatever one client sends.
 * Nothing is refused and nothing is reordered within a client; without a flood (fewer than
 * 64 requests a turn) nothing waits. Register first: the requests' other hooks run when
 * they are started. Memory: a queued request is one already read, bounded by the
 * connections the server holds (`HTTP_MAX_CONNECTIONS`).
 */
export function turnsPlugin(app: FastifyInstance): void {
  /** Requests started in this turn. */
  let started = 0
  /** Waiting requests by client, in round-robin order (a client served goes to the back). */
  const queues = new Map<string, Array<() => void>>()
  let queued = 0
  let scheduled = false
  const schedule = (): void => {
    if (scheduled) return
    scheduled = true
    setImmediate(nextTurn)
  }
  // After the turn's reads (setImmediate runs once the loop has polled its sockets): a new budget, the queues served first.
  const nextTurn = (): void => {
    scheduled = false
    started = 0
    while (queued > 0 && started < PER_TURN) {
      for (const [client, queue] of queues) {
        const start = queue.shift()!
        queued--
        queues.delete(client)
        if (queue.length > 0) queues.set(client, queue)
        started++
        start()
        if (started >= PER_TURN || queued === 0) break
      }
    }
    if (queued > 0) schedule()
  }
  app.addHook('onRequest', (request, _reply, done) => {
    if (queued === 0 && started < PER_TURN) {
      if (started++ === 0) schedule()
      done()
      return
    }
    const queue = queues.get(request.ip)
    if (queue) queue.push(done)
    else queues.set(request.ip, [done])
    queued++
    schedule()
  })
}
