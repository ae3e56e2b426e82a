import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import type { SendOutcome, WebhookSender } from '../../ports/webhook-sender.ts'
import { isPublicAddress } from '../../domain/webhook/target.ts'

/** `Retry-After` as ms from `now`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); null when absent or malformed. */
function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const v = Array.isArray(value) ? value[0] : value
  if (v === undefined) return null
  const text = v.trim()
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  if (!/[a-z]/i.test(text) || Number.isNaN(at)) return null
  return Math.max(0, at - now)
}

export interface SendOptions {
  timeout_ms: number
  /** Allow loopback/private addresses (WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  allow_private: boolean
  user_agent?: string
}

const MAX_RESPONSE_BYTES = 64 * 1024

/**
 * A DNS lookup that refuses names resolving to non-public addresses, so a public-looking
 * name cannot reach the internal network (checked on the address actually connected to,
 * which also defeats DNS rebinding).
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0)
      const usable = allowPrivate ? addresses : addresses.filter(a => isPublicAddress(a.address))
      if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} resolves to no public address`), { code: 'EPRIVATETARGET' }), '', 0)
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable)
      callback(null, usable[0].address, usable[0].family)
    })
  }
}

/**
 * POSTs one webhook body: no redirects followed, at most `timeout_ms` for the whole
 * exchange, the response body read (up to 64 KiB) and discarded. A 2xx status is success;
 * the caller decides. Never throws: every failure is an outcome with `error`.
 */
export async function postWebhook(url: string, body: string, headers: Record<string, string>, options: SendOptions): Promise<SendOutcome> {
  const started = performance.now()
  const done = (status: number | null, error: string | null, retryAfter: number | null = null): SendOutcome => ({
    status,
    error,
    duration_ms: Math.round(performance.now() - started),
    retry_after_ms: retryAfter
  })
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return done(null, 'invalid url')
  }
  const literal = target.hostname.replace(/^\[|\]$/g, '')
  // An IP literal is connected to without a lookup, so it is judged here.
  if (!options.allow_private && isIP(literal) !== 0 && !isPublicAddress(literal)) {
    return done(null, 'target address is not public')
  }
  const request = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : null
  if (!request) return done(null, 'unsupported scheme')
  return await new Promise<SendOutcome>(resolve => {
    let settled = false
    let retryAfter: number | null = null
    const finish = (status: number | null, error: string | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(done(status, error, retryAfter))
    }
    const req = request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': options.user_agent ?? 'email-verification-webhooks/1',
          ...headers
        },
        lookup: guardedLookup(options.allow_private),
        agent: false
      },
      res => {
        if (res.statusCode === 429 || res.statusCode === 503) retryAfter = retryAfterMs(res.headers['retry-after'])
        let received = 0
        res.on('data', (chunk: Buffer) => {
          received += chunk.length
          if (received > MAX_RESPONSE_BYTES) {
            finish(res.statusCode ?? null, null)
            res.destroy()
          }
        })
        res.on('end', () => {
          finish(res.statusCode ?? null, null)
        })
        res.on('error', () => {
          finish(res.statusCode ?? null, null)
        })
      }
    )
    const timer = setTimeout(() => {
      finish(null, `no response within ${options.timeout_ms} ms`)
      req.destroy()
    }, options.timeout_ms)
    req.on('error', (_err: NodeJS.ErrnoException) => {
      // One answer for every failure to reach the host (no such name, a name that resolves
      // only to private addresses, refused, unreachable): a test-fire must not tell which
      // internal names exist.
      finish(null, 'could not connect to the endpoint')
    })
    req.end(body)
  })
}

/** A sender bound to its options: `(url, body, headers) → outcome`. */
export function webhookSender(options: SendOptions): WebhookSender {
  return async (url, body, headers) => await postWebhook(url, body, headers, options)
}
