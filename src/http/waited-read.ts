import type { FastifyReply } from 'fastify'
import type { HttpRuntime } from './runtime.ts'

/** The header that says a read's `?wait=` was not honoured, and why (`account_limit`, `service_limit`). */
const WAIT_REFUSED_HEADER = 'wait-refused'

/**
 * A read of `owner`'s job or batch `id` that waits `seconds` for `done` (interface "Answers
 * without polling"), woken by the read models, ended early when the client goes away. Past
 * the caps on waiting reads (per account, per process: `WAITS_PER_ACCOUNT`,
 * `WAITS_PER_PROCESS`) it is answered at once with what it read, as `wait=0` would be, and
 * the answer carries `Wait-Refused: account_limit` or `service_limit`.
 */
export async function waitedRead<T>(
  rt: HttpRuntime,
  reply: FastifyReply,
  owner: string,
  id: string,
  seconds: number,
  read: () => Promise<T>,
  done: (value: T) => boolean
): Promise<T> {
  if (rt.waits === null || seconds === 0) return await read()
  const { value, refused } = await rt.waits.until(owner, id, seconds * 1000, read, done, clientGone(reply))
  if (refused !== null) reply.header(WAIT_REFUSED_HEADER, refused)
  return value
}

/**
 * An AbortSignal that fires when the client of `reply` goes away before its answer is sent
 * (a waiting read then stops); the listener goes with the answer (keep-alive sockets carry
 * many requests).
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  const res = reply.raw
  const gone = (): void => {
    if (!res.writableFinished) controller.abort()
  }
  res.once('close', gone)
  return controller.signal
}
