import type { SendOutcome } from '../../../ports/webhook-sender.ts'
import type { Config } from '../../../config.ts'

/** Retry schedule and auto-disable threshold: the `WEBHOOK_*` configuration (`config.webhooks`). */
export type DeliveryPolicy = Pick<Config['webhooks'], 'max_attempts' | 'retry_base_ms' | 'disable_after_failures'>

/**
 * Delay before attempt `next` (2-based) of a delivery: `retry_base_ms` × 4^(next − 2), plus
 * up to 10% jitter (bounded exponential back-off, docs/interface.md §6 rule 1). With the
 * default 30 s base and 6 attempts: 30 s, 2 min, 8 min, 32 min, ~2 h 8 min.
 */
export function retryDelayMs(policy: DeliveryPolicy, next: number, random = Math.random): number {
  const base = policy.retry_base_ms * 4 ** Math.max(0, next - 2)
  return Math.round(base * (1 + 0.1 * random()))
}

/**
 * When the next attempt is due (ms from now), or null when none comes: attempts left and
 * not `410 Gone`. A 429 or 503 with `Retry-After` waits that long, but never less than the
 * schedule's delay nor more than its longest one (the delay before the last attempt).
 */
export function nextAttemptIn(policy: DeliveryPolicy, attempt: number, maxAttempts: number, outcome: SendOutcome): number | null {
  const succeeded = outcome.status !== null && outcome.status >= 200 && outcome.status < 300
  if (succeeded || outcome.status === 410 || attempt >= maxAttempts) return null
  const scheduled = retryDelayMs(policy, attempt + 1)
  const asked = outcome.retry_after_ms ?? null
  if (asked === null) return scheduled
  return Math.max(
    scheduled,
    Math.min(
      asked,
      retryDelayMs(policy, maxAttempts, () => 1)
    )
  )
}
