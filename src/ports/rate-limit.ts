/**
 * Rate counters (docs/interface.md §8: per-key rate limits seeded from the plan): how many
 * requests a credential made in the current fixed window. Windows are aligned to the
 * epoch (`floor(now / window)`), so every process counting into one shared store agrees
 * on them. Every adapter passes test/support/ratelimit-contract.ts.
 */
export interface RateCounter {
  /**
   * Counts one request of `key` in the window of `window_ms` that holds now.
   * @returns the window's count including this request, and ms until the window ends.
   */
  hit(key: string, window_ms: number): Promise<{ count: number; reset_ms: number }>
  close(): Promise<void>
}

/** The window holding `now` (ms) and the ms left in it. */
export function windowOf(now: number, windowMs: number): { index: number; reset_ms: number } {
  const index = Math.floor(now / windowMs)
  return { index, reset_ms: (index + 1) * windowMs - now }
}

/**
 * Counters in this process's memory (the embedded default: one process serves the API).
 * Memory: one entry per credential active in the current window; entries of past windows
 * are swept once per window.
 */
export class InProcessRateCounter implements RateCounter {
  private readonly counts = new Map<string, { index: number; count: number }>()
  private swept = 0
  private readonly now: () => number
  constructor(now: () => number = Date.now) {
    this.now = now
  }

  async hit(key: string, windowMs: number): Promise<{ count: number; reset_ms: number }> {
    const now = this.now()
    const w = windowOf(now, windowMs)
    if (w.index !== this.swept) {
      for (const [k, v] of this.counts) if (v.index < w.index) this.counts.delete(k)
      this.swept = w.index
    }
    const entry = this.counts.get(key)
    const count = entry && entry.index === w.index ? entry.count + 1 : 1
    this.counts.set(key, { index: w.index, count })
    return { count, reset_ms: w.reset_ms }
  }

  async close(): Promise<void> {
    this.counts.clear()
  }
}
