import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Piscina } from 'piscina'
import sjson from 'secure-json-parse'
import { unjoin, type ParsedBody } from '../json-worker.ts'

/** Bodies of at least this many bytes are parsed off the event loop (a batch chunk: up to 25.7 MB; everything else under 1 MiB). */
const OFF_LOOP_BYTES = 256 * 1024

/** A body that is not JSON: 400, as Fastify's own parser answers (`request.malformed_body`). */
const malformed = (message: string): Error => Object.assign(new Error(message), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' })

/**
 * `application/json` bodies: under 256 KiB
 * parsed at once, as Fastify parses them (secure-json-parse, `__proto__` and
 * `constructor.prototype` refused); larger ones — a plan's largest chunk is 50,000
 * addresses in 12 MB, 100–170 ms of `JSON.parse` on the event loop — parsed in a thread of
 * their own, whose answer costs the loop a copy and a split (see `json-worker.ts`). One
 * thread, kept 10 s after its last body; a body waits for it in order.
 * @throws (through Fastify) a 400 for an empty body or text that is not JSON.
 */
export function jsonBodyPlugin(app: FastifyInstance): void {
  const pool = new Piscina({ filename: new URL('../json-worker.ts', import.meta.url).href, minThreads: 0, maxThreads: 1, idleTimeout: 10_000 })
  app.addHook('onClose', async () => {
    await pool.destroy()
  })
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (_request: FastifyRequest, body: Buffer) => {
    if (body.length === 0) throw Object.assign(new Error("Body cannot be empty when content-type is set to 'application/json'"), { statusCode: 400 })
    if (body.length < OFF_LOOP_BYTES) {
      try {
        return sjson.parse(body, undefined, { protoAction: 'error', constructorAction: 'error' }) as unknown
      } catch {
        throw malformed("Body is not valid JSON but content-type is set to 'application/json'")
      }
    }
    let parsed: ParsedBody
    try {
      // The body's own memory moves to the thread (no copy) when it is not a slice of a shared pool.
      const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength
      parsed = (await pool.run(whole ? Piscina.move(body) : new Uint8Array(body))) as ParsedBody
    } catch {
      throw malformed("Body is not valid JSON but content-type is set to 'application/json'")
    }
    return unjoin(parsed)
  })
}
