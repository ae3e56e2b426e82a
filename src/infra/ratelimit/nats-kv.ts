import { connect, type NatsConnection } from '@nats-io/transport-node'
import { Kvm, type KV } from '@nats-io/kv'
import { windowOf, type RateCounter } from '../../ports/rate-limit.ts'
import { natsConnection } from '../bus/nats.ts'

/** Compare-and-set attempts per hit before it gives up (each a round trip; contention is per credential). */
const MAX_ATTEMPTS = 64

/**
 * Counters in a NATS JetStream key-value bucket (`<prefix>_rate_limits`), shared by every
 * `svc api` process of the production topology: one entry per credential and window,
 * created with `create` (fails when another process created it first) and advanced with
 * `update` at the revision read (fails when another process advanced it meanwhile), retried
 * on either, so concurrent requests across processes are each counted once. The requests
 * of one process on one key are added together, one write per round. Entries expire
 * with the bucket's TTL (two windows of the longest window). Cost: one get and one write
 * per round of a key's waiting requests, plus one per race lost to another process.
 */
export class NatsKvRateCounter implements RateCounter {
  private readonly nc: NatsConnection
  private readonly kv: KV
  private readonly owns: boolean
  private constructor(nc: NatsConnection, kv: KV, owns: boolean) {
    this.nc = nc
    this.kv = kv
    this.owns = owns
  }

  /** Connects to `url` and opens (or creates) the bucket. @throws when no server answers. */
  static async connect(url: string, options: { prefix: string; max_window_ms?: number }): Promise<NatsKvRateCounter> {
    const nc = await connect({ ...natsConnection(url), name: `svc-ratelimit-${process.pid}`, maxReconnectAttempts: -1 })
    try {
      const kv = await new Kvm(nc).create(`${options.prefix}_rate_limits`, { history: 1, ttl: 2 * (options.max_window_ms ?? 3_600_000) })
      return new NatsKvRateCounter(nc, kv, true)
    } catch (err) {
      await nc.close()
      throw err
    }
  }

  /** Hits waiting for their key's write, per KV key: a process writes each key once at a time, for all its waiting hits. */
  private readonly waiting = new Map<string, Array<{ resolve: (count: number) => void; reject: (err: unknown) => void }>>()

  async hit(key: string, windowMs: number): Promise<{ count: number; reset_ms: number }> {
    const w = windowOf(Date.now(), windowMs)
    // KV keys: letters, digits and - _ = . /; the window ends the key.
    const k = `${key.replace(/[^A-Za-z0-9_=-]/g, '_')}.${windowMs}.${w.index}`
    const count = await new Promise<number>((resolve, reject) => {
      const queue = this.waiting.get(k)
      if (queue) {
        queue.push({ resolve, reject })
        return
      }
      this.waiting.set(k, [{ resolve, reject }])
      void this.drain(k)
    })
    return { count, reset_ms: w.reset_ms }
  }

  /**
   * Adds every hit waiting on `k` in one compare-and-set and hands them consecutive counts;
   * hits arriving meanwhile wait for the next round. Contention is then between processes,
   * not between the requests of one process.
   */
  private async drain(k: string): Promise<void> {
    for (;;) {
      const batch = this.waiting.get(k)!
      this.waiting.set(k, [])
      try {
        const base = await this.add(k, batch.length)
        batch.forEach((h, i) => {
          h.resolve(base + i + 1)
        })
      } catch (err) {
        for (const h of batch) h.reject(err)
      }
      if (this.waiting.get(k)!.length === 0) {
        this.waiting.delete(k)
        return
      }
    }
  }

  /** Adds `n` to `k` by compare-and-set. @returns the count before. */
  private async add(k: string, n: number): Promise<number> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.kv.get(k)
      try {
        if (entry?.operation !== 'PUT') {
          await this.kv.create(k, String(n))
          return 0
        }
        const before = Number(entry.string())
        await this.kv.update(k, String(before + n), entry.revision)
        return before
      } catch (err) {
        // Another process wrote first ("wrong last sequence", "key exists"): read again and retry.
        if (!/wrong last sequence|key exists/i.test((err as Error).message)) throw err
      }
    }
    throw new Error(`rate counter ${k}: too much contention`)
  }

  async close(): Promise<void> {
    if (this.owns) await this.nc.close()
  }
}
