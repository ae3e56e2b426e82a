/**
 * When a greylisted address is asked next (RFC 6647 §2.1: the receiver accepts a retry
 * after its window): `retry_ms` doubled for each retry already made, from the time of the
 * greylisted answer (ms since the epoch) — the server had the RCPT before it answered, so
 * a window counted from the answer has passed on the server too and the retry never
 * arrives before the window ends, with no slack to add; but never after
 * the deadline: when the back-off would pass it, the last attempt is at the deadline, so
 * that an address still greylisted gives up at its deadline, not at the next retry after
 * it, nor early at the last retry before it. The one rule of single jobs (JobDeferred),
 * batch parts and the engine's own rounds (bulk).
 * @param answeredAtMs when the greylisted answer came (epoch ms).
 * @param retriesMade retries already made for this address (0 for the first deferral).
 * @param deadlineMs the job's deadline (epoch ms; queued or added at, plus
 *   `VERIFIER_GREYLIST_DEADLINE_S`).
 * @returns when to ask again (epoch ms, at most `deadlineMs`), or null when the answer came
 *   at or after the deadline: give up (`unknown`/`greylisted`).
 */
export function greylistRetryAt(answeredAtMs: number, retryMs: number, retriesMade: number, deadlineMs: number): number | null {
  if (answeredAtMs >= deadlineMs) return null
  return Math.min(deadlineMs, answeredAtMs + retryMs * 2 ** retriesMade)
}
