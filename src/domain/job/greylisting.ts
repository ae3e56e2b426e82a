/** Each retry is this much later than the one before, counted from the first try (see `greylistRetryAt`). */
const GREYLIST_GROWTH = 1.25

/**
 * When a greylisted address is asked next (RFC 6647 §2.1: the receiver accepts a retry
 * after its window, which it does not announce: postgrey's default is 300 s, others 60 s
 * to 30 min). Retries fall at `startMs + retryMs × 1.25^n` (n = retries already made), so
 * that the first one after the receiver's window, however long, comes at most 1.25× its
 * window after the first try (a window shorter than `retryMs` is met at `retryMs`); a retry
 * is never sooner than a quarter of `retryMs` after the last greylisted answer (a round
 * that ran late does not make the next one follow it at once). Counted from answers the
 * server had before it answered, so no slack is added. Never after the deadline: when the
 * schedule would pass it, the last attempt is at the deadline, so that an address still
 * greylisted gives up at its deadline, not at the next retry after it, nor early at the
 * last retry before it. The one rule of single jobs (JobDeferred), batch parts and the
 * engine's own rounds (bulk); a retry of many recipients at one MX asks one of them first
 * (the engine's `greylist_retry`), so that the closer retries cost one refusal each.
 * @param startMs when the address was first asked (epoch ms: its first greylisted answer,
 *   or when the job or chunk came, which is no later).
 * @param answeredAtMs when the last greylisted answer came (epoch ms).
 * @param retryMs the first retry's delay (`VERIFIER_GREYLIST_RETRY_S`).
 * @param retriesMade retries already made for this address (0 for the first deferral).
 * @param deadlineMs the job's deadline (epoch ms; queued or added at, plus
 *   `VERIFIER_GREYLIST_DEADLINE_S`).
 * @returns when to ask again (epoch ms, at most `deadlineMs`), or null when the answer came
 *   at or after the deadline: give up (`unknown`/`greylisted`).
 */
export function greylistRetryAt(startMs: number, answeredAtMs: number, retryMs: number, retriesMade: number, deadlineMs: number): number | null {
  if (answeredAtMs >= deadlineMs) return null
  const scheduled = startMs + retryMs * GREYLIST_GROWTH ** retriesMade
  return Math.min(deadlineMs, Math.max(scheduled, answeredAtMs + retryMs * (GREYLIST_GROWTH - 1)))
}
