import { Transform, type TransformCallback } from 'node:stream'
import type { FastifyRequest, onSendAsyncHookHandler, preParsingAsyncHookHandler } from 'fastify'
import { HttpProblem } from '../problem.ts'

/** What one request body may hold: its bytes, and the JSON values in its arrays and objects. */
export interface BodyAllowance {
  /** Bytes of the body as sent (a larger `Content-Length` is refused before a byte is read). */
  bytes: number
  /** Values separated by commas outside strings, over the whole document (a bound on what parsing allocates). */
  values: number
  /** Nesting of arrays and objects. */
  depth: number
  /** The machine code of the 413, `<operation>.body_too_large`. */
  code: string
  /** The sentence the caller reads: what the plan accepts and what to do. */
  detail: string
}

/** How long a refused body is still read and dropped after the 413 (ms), so the client reads the answer before the connection closes. */
const LINGER_MS = 5_000

/**
 * Counts a JSON text's structure as it streams, without parsing it: bytes, commas and
 * nesting outside strings (RFC 8259 §7: a string ends at an unescaped quote). Passes the
 * bytes on unchanged; at the first byte past one of the allowance's bounds it calls
 * `refuse` and fails with a 413 `HttpProblem`. Memory: a few numbers, whatever the body.
 */
class JsonShapeMeter extends Transform {
  /** Bytes received so far (Fastify compares it with `Content-Length`). */
  receivedEncodedLength = 0
  private readonly allowance: BodyAllowance
  private readonly refuse: () => void
  private inString = false
  private escaped = false
  private values = 0
  private depth = 0

  constructor(allowance: BodyAllowance, refuse: () => void) {
    super()
    this.allowance = allowance
    this.refuse = refuse
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.receivedEncodedLength += chunk.length
    if (this.receivedEncodedLength > this.allowance.bytes) {
      this.stop(done)
      return
    }
    let { inString, escaped, values, depth } = this
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]
      if (inString) {
        if (escaped) escaped = false
        else if (b === 0x5c)
          escaped = true // backslash
        else if (b === 0x22) inString = false // quote
        continue
      }
      if (b === 0x22) inString = true
      else if (b === 0x2c)
        values++ // comma
      else if (b === 0x5b || b === 0x7b)
        depth++ // [ {
      else if (b === 0x5d || b === 0x7d) depth-- // ] }
      if (values > this.allowance.values || depth > this.allowance.depth) {
        this.stop(done)
        return
      }
    }
    Object.assign(this, { inString, escaped, values, depth })
    done(null, chunk)
  }

  private stop(done: TransformCallback): void {
    this.refuse()
    done(tooLarge(this.allowance))
  }
}

/** The 413 of `a`. */
function tooLarge(a: BodyAllowance): HttpProblem {
  // Fastify keeps the status of a stream error that carries one.
  return Object.assign(new HttpProblem(413, a.code, a.detail), { statusCode: 413 })
}

/**
 * Reads and drops the rest of a refused body for at most LINGER_MS, then closes the
 * connection if the client is still sending (RFC 9112 §9.6: a server that closes at once
 * while the client sends may have its answer lost to a reset). Memory: none kept.
 */
function drain(request: FastifyRequest): void {
  const raw = request.raw
  raw.unpipe()
  raw.resume()
  if (raw.readableEnded) return
  const timer = setTimeout(() => {
    raw.socket?.destroy()
  }, LINGER_MS)
  timer.unref()
  raw.once('end', () => {
    clearTimeout(timer)
  })
  raw.once('close', () => {
    clearTimeout(timer)
  })
}

/**
 * A `preParsing` hook (with its `onSend`) that refuses, before the body is parsed, what the
 * caller cannot be allowed to send (one request must
 * not exhaust the heap or hold the event loop): a `Content-Length` above the allowance is a
 * 413 before a byte is kept; a body sent without one (chunked) is metered as it streams and
 * stopped at the first byte past a bound. What the client still sends is read and dropped
 * (for at most 5 s) so that it reads the 413; nothing of it is kept. Runs after
 * authentication (`onRequest`), so the allowance may depend on the caller's plan.
 * @param allowanceOf the caller's allowance, or null to let the route's own `bodyLimit` rule.
 * @returns route options to spread into the route: `preParsing` and `onSend`.
 * @throws HttpProblem 413 with the allowance's code.
 */
export function bodyGuard(allowanceOf: (request: FastifyRequest) => BodyAllowance | null): {
  preParsing: preParsingAsyncHookHandler
  onSend: onSendAsyncHookHandler
} {
  return {
    preParsing: async (request, _reply, payload) => {
      const allowance = allowanceOf(request)
      if (allowance === null) return payload
      const declared = Number(request.headers['content-length'])
      if (Number.isFinite(declared) && declared > allowance.bytes) {
        drain(request)
        throw tooLarge(allowance)
      }
      return payload.pipe(
        new JsonShapeMeter(allowance, () => {
          drain(request)
        })
      )
    },
    // Fastify answers a failed body stream with `Connection: close`, which would close the
    // socket while the client still sends (a reset that can lose the answer): the drain closes it.
    onSend: async (_request, reply, payload) => {
      if (reply.statusCode === 413) reply.removeHeader('connection')
      return payload
    }
  }
}
