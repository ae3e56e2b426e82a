/**
 * When a greylisted address is asked again (RFC 6647 §2.1: the receiver accepts a retry
 * after its window): `retry_ms` doubled for each retry already made, from the time of the
 * greylisted answer (ms since the epoch), plus the engine's slack (a tenth of the window,
 * at most 250 ms) so that the retry never arrives before the window ends. The one rule of
 * single jobs (JobDeferred) and batch parts; the caller gives up when the result is at or
 * after the job's deadline.
 * @param retriesMade retries already made for this address (0 for the first deferral).
 */
export function greylistRetryAt(answeredAtMs: number, retryMs: number, retriesMade: number): number {
  return answeredAtMs + retryMs * 2 ** retriesMade + Math.min(250, retryMs * 0.1)
}
