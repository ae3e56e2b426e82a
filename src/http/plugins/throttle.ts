import { HttpProblem } from '../problem.ts'

/**
 * Counts failures per client (IP address) in a sliding window and refuses with 429 once a
 * client has failed `limit` times within `window_ms` (OWASP ASVS 5.0 §6.3: rate limiting
 * of authentication). In memory, per process: a lock that lasts the window, not forever.
 */
export class FailureThrottle {
  private readonly failures = new Map<string, number[]>()
  private readonly limit: number
  private readonly windowMs: number
  private readonly code: string

  constructor(options: { limit: number; window_ms: number; code: string }) {
    this.limit = options.limit
    this.windowMs = options.window_ms
    this.code = options.code
  }

  private recent(client: string, now: number): number[] {
    const list = (this.failures.get(client) ?? []).filter(t => now - t < this.windowMs)
    if (list.length === 0) this.failures.delete(client)
    else this.failures.set(client, list)
    return list
  }

  /** @throws HttpProblem 429 (with Retry-After seconds in `detail`) when the client is over the limit. */
  check(client: string, now = Date.now()): void {
    const list = this.recent(client, now)
    if (list.length >= this.limit) {
      const retry = Math.ceil((list[0] + this.windowMs - now) / 1000)
      throw new HttpProblem(429, this.code, `too many failed attempts from this client; try again in ${retry} s`, undefined, retry)
    }
  }

  /**
   * Counts an attempt before it is judged, as a failure until `succeeded` says otherwise:
   * concurrent attempts beyond the limit are refused without being judged.
   * @throws HttpProblem 429 as `check`.
   */
  attempt(client: string, now = Date.now()): void {
    this.check(client, now)
    this.fail(client, now)
  }

  /** The attempt counted last for `client` succeeded: it no longer counts. */
  succeeded(client: string): void {
    const list = this.failures.get(client)
    if (!list) return
    list.pop()
    if (list.length === 0) this.failures.delete(client)
  }

  fail(client: string, now = Date.now()): void {
    const list = this.recent(client, now)
    list.push(now)
    this.failures.set(client, list)
    if (this.failures.size > 100_000) this.failures.delete(this.failures.keys().next().value as string)
  }
}

const signInThrottles = new WeakMap<object, FailureThrottle>()

/**
 * The per-client throttle of sign-ins of one app (keyed by its runtime): 20 that did not
 * succeed per 15 minutes, shared by `/api/auth/login` and the
 * OAuth consent page's sign-in, so that no pathway sprays passwords past it (ASVS 5.0 V6.3.1).
 */
export function signInThrottleOf(runtime: object): FailureThrottle {
  let t = signInThrottles.get(runtime)
  if (!t) {
    t = new FailureThrottle({ limit: 20, window_ms: 15 * 60_000, code: 'login.too_many_attempts' })
    signInThrottles.set(runtime, t)
  }
  return t
}
