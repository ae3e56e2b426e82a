/** What one POST of a webhook body came to. */
export interface SendOutcome {
  /** HTTP status of the response; null when none came. */
  status: number | null
  /** Why no usable response came (timeout, refused, private target…); null otherwise. */
  error: string | null
  duration_ms: number
  /** A 429 or 503 answer's `Retry-After` (RFC 9110 §10.2.3: seconds or an HTTP date), in ms from now; null otherwise. */
  retry_after_ms?: number | null
}

/**
 * POSTs one webhook body to an endpoint; never throws (every failure is an outcome with
 * `error`). The adapter (src/infra/webhooks/sender.ts) follows no redirect, refuses
 * non-public targets unless allowed, and bounds the exchange's time and the body read.
 */
export type WebhookSender = (url: string, body: string, headers: Record<string, string>) => Promise<SendOutcome>
