import { LOGIN_FAILURES_BEFORE_LOCK, LOGIN_LOCK_MS } from './decider.ts'

/** Addresses remembered at most (the oldest is forgotten first): memory stays bounded under a spray of guesses. */
const MAX_ADDRESSES = 100_000

/**
 * Sign-in attempts for addresses without an account, per address, in this process (one
 * per command context, built at start): they lock after LOGIN_FAILURES_BEFORE_LOCK within
 * LOGIN_LOCK_MS like an account does, so a 429 does not tell that an account exists. An
 * address has no stream to count in (it has no account); the count is not an event.
 * Memory: at most MAX_ADDRESSES addresses × LOGIN_FAILURES_BEFORE_LOCK instants.
 */
export class UnknownSignIns {
  private readonly attempts = new Map<string, number[]>()

  /** The attempts of `key` within LOGIN_LOCK_MS before `now` (ms since the epoch); older ones are forgotten. */
  private recent(key: string, now: number): number[] {
    const list = (this.attempts.get(key) ?? []).filter(t => now - t < LOGIN_LOCK_MS)
    if (list.length === 0) this.attempts.delete(key)
    else this.attempts.set(key, list)
    return list
  }

  /** Whether `key` is locked at `now`: LOGIN_FAILURES_BEFORE_LOCK attempts within LOGIN_LOCK_MS. */
  locked(key: string, now: number): boolean {
    return this.recent(key, now).length >= LOGIN_FAILURES_BEFORE_LOCK
  }

  /** Counts an attempt of `key` at `now`. */
  count(key: string, now: number): void {
    this.attempts.set(key, [...this.recent(key, now), now].slice(-LOGIN_FAILURES_BEFORE_LOCK))
    if (this.attempts.size > MAX_ADDRESSES) this.attempts.delete(this.attempts.keys().next().value as string)
  }
}
