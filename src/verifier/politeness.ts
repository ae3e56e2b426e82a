import { LRUCache } from 'lru-cache'
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, Math.max(0, ms)))

/**
 * A gate in front of one receiver: at most `limit` sessions at once, new sessions paced
 * by a token bucket (`rate` per second, `burst` at once), and an adaptive pause after the
 * receiver pushes back (421 or 4.7.x): no new session until the pause ends, and the
 * concurrency limit halves; each clean session adds one back (AIMD).
 */
export class Gate {
  private readonly max: number
  private readonly rate: number
  private readonly burst: number
  private limit: number
  private active = 0
  private tokens: number
  private last = Date.now()
  private pausedUntil = 0
  private backoffMs = 0
  private waiters: Array<() => void> = []
  private readonly backoff: { initial_ms: number; max_ms: number }
  private readonly reuseGraceMs: number

  /** `reuse_grace_ms`: how long after its release a slot may be taken again (0: at once). */
  constructor(options: {
    max_concurrent: number
    rate_per_s: number
    burst: number
    backoff?: { initial_ms: number; max_ms: number }
    reuse_grace_ms?: number
  }) {
    this.max = Math.max(1, options.max_concurrent)
    this.limit = this.max
    this.rate = options.rate_per_s
    this.burst = Math.max(1, options.burst)
    this.tokens = this.burst
    this.backoff = options.backoff ?? { initial_ms: 1_000, max_ms: 60_000 }
    this.reuseGraceMs = options.reuse_grace_ms ?? 0
  }

  private refill(): void {
    const now = Date.now()
    if (Number.isFinite(this.rate)) this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate)
    else this.tokens = this.burst
    this.last = now
  }

  /** Waits for a slot and a token; resolves with the function that gives the slot back (`reuse_grace_ms` later). */
  async acquire(): Promise<() => void> {
    for (;;) {
      this.refill()
      const now = Date.now()
      if (this.active < this.limit && now >= this.pausedUntil && this.tokens >= 1) {
        this.active++
        this.tokens -= 1
        let released = false
        const free = (): void => {
          this.active--
          this.waiters.shift()?.()
        }
        return () => {
          if (released) return
          released = true
          if (this.reuseGraceMs > 0) setTimeout(free, this.reuseGraceMs)
          else free()
        }
      }
      if (now < this.pausedUntil) await sleep(this.pausedUntil - now)
      else if (this.active < this.limit) await sleep(((1 - this.tokens) / this.rate) * 1000)
      else await new Promise<void>(resolve => this.waiters.push(resolve))
    }
  }

  /**
   * The receiver pushed back: pause new sessions (doubling up to max, and never less than
   * `atLeastMs`: a recipient rate limit's window) and halve concurrency. @returns the pause (ms).
   */
  pushBack(atLeastMs = 0, fresh = false): number {
    if (fresh) this.backoffMs = 0
    const next = this.backoffMs === 0 ? this.backoff.initial_ms : Math.min(this.backoff.max_ms, this.backoffMs * 2)
    this.backoffMs = Math.max(next, atLeastMs)
    this.pausedUntil = Date.now() + this.backoffMs
    this.limit = Math.max(1, Math.floor(this.limit / 2))
    return this.backoffMs
  }

  /** A session went through cleanly: grow concurrency back by one, forget the back-off. */
  succeeded(): void {
    this.backoffMs = 0
    if (this.limit < this.max) {
      this.limit++
      this.waiters.shift()?.()
    }
  }

  get concurrency(): number {
    return this.limit
  }
}

export interface PolitenessOptions {
  /**
   * Concurrent sessions per MX host of no known provider (a known provider's hosts take its
   * `max_sessions`). Default 1: a receiver's limit on our sessions is not announced, and a
   * Postfix with `smtpd_client_connection_count_limit = 1` logs a second one as over it.
   */
  max_sessions_per_host: number
  /** New sessions per second per MX host (token bucket), and the bucket size. */
  sessions_per_second_per_host: number
  burst_per_host: number
  /** Limits per provider (all MX hosts of google, microsoft, …). */
  providers: Readonly<Record<string, { max_sessions: number; sessions_per_second: number }>>
  /** Concurrent sessions over all receivers. */
  max_sessions: number
  /**
   * Concurrent sessions per IP address of a receiver, whatever MX names point at it (shared
   * hosting: many domains, one server, which commonly allows 10 sessions a client). Default 6.
   */
  max_sessions_per_ip?: number
  backoff: { initial_ms: number; max_ms: number }
  /**
   * How long (ms) a receiver that limits our recipient rate (`rate_limited`: Postfix's
   * `450 4.7.1 Error: too many recipients from …`) is left alone: the receiver's window is
   * not announced; Postfix counts in `anvil_rate_time_unit`, 60 s by default, from the first
   * recipient of the window (which came before the refusal). Default 61,000 (a second of
   * slack for clocks that count whole seconds); doubled while the limit keeps coming.
   */
  rate_window_ms?: number
  /**
   * How long (ms) after a session ends its host's and provider's slots may be taken again
   * (the global one at once). The receiver counts a session until it has handled the close
   * (Postfix's anvil, a server's accept loop): a new session on the slot at once can meet
   * 421 "too many connections", which costs a pause and half the host's concurrency.
   * Default 20.
   */
  slot_reuse_grace_ms?: number
}

export const DEFAULT_POLITENESS: PolitenessOptions = {
  max_sessions_per_host: 1,
  sessions_per_second_per_host: 3,
  burst_per_host: 1,
  providers: {
    google: { max_sessions: 10, sessions_per_second: 5 },
    microsoft: { max_sessions: 8, sessions_per_second: 4 },
    yahoo: { max_sessions: 3, sessions_per_second: 1 },
    apple: { max_sessions: 4, sessions_per_second: 2 },
    mimecast: { max_sessions: 4, sessions_per_second: 2 },
    proofpoint: { max_sessions: 4, sessions_per_second: 2 }
  },
  max_sessions: 256,
  max_sessions_per_ip: 6,
  backoff: { initial_ms: 1_000, max_ms: 60_000 },
  rate_window_ms: 61_000,
  slot_reuse_grace_ms: 20
}

/** No per-receiver limits at all: the naive way (one global cap only). */
export function unlimited(maxSessions: number): PolitenessOptions {
  return {
    max_sessions_per_host: Number.MAX_SAFE_INTEGER,
    sessions_per_second_per_host: Infinity,
    burst_per_host: Number.MAX_SAFE_INTEGER,
    providers: {},
    max_sessions: maxSessions,
    backoff: { initial_ms: 1_000, max_ms: 60_000 },
    slot_reuse_grace_ms: 0
  }
}

/**
 * Politeness per MX host and per provider (docs/design/verification.md "Doing it fast and politely"):
 * a session needs a slot at its host's gate, its provider's gate and the global gate,
 * taken in that order (so no two sessions wait on each other in a cycle).
 */
export class Politeness {
  private readonly o: PolitenessOptions
  private readonly hosts = new Map<string, Gate>()
  private readonly providers = new Map<string, Gate>()
  /** Sessions per receiver address: the gates in use only (one is dropped when its last session ends). */
  private readonly addresses = new Map<string, { gate: Gate; users: number }>()
  /** Receivers that limited our recipient rate, until when (epoch ms): the most recent 10,000. */
  private readonly pausedAddresses = new LRUCache<string, number>({ max: 10_000 })
  private readonly global: Gate

  constructor(options: PolitenessOptions) {
    this.o = options
    this.global = new Gate({ max_concurrent: options.max_sessions, rate_per_s: Infinity, burst: options.max_sessions })
  }

  private hostGate(host: string, provider: string | null): Gate {
    let g = this.hosts.get(host)
    if (!g) {
      // A known provider's hosts take sessions as the provider allows (its own gate bounds them all).
      const known = provider === null ? undefined : this.o.providers[provider]
      g = new Gate({
        max_concurrent: known ? Math.max(this.o.max_sessions_per_host, known.max_sessions) : this.o.max_sessions_per_host,
        rate_per_s: this.o.sessions_per_second_per_host,
        burst: this.o.burst_per_host,
        backoff: this.o.backoff,
        reuse_grace_ms: this.o.slot_reuse_grace_ms ?? 20
      })
      this.hosts.set(host, g)
    }
    return g
  }

  private providerGate(provider: string | null): Gate | null {
    if (!provider || !this.o.providers[provider]) return null
    let g = this.providers.get(provider)
    if (!g) {
      const p = this.o.providers[provider]
      g = new Gate({
        max_concurrent: p.max_sessions,
        rate_per_s: p.sessions_per_second,
        burst: p.max_sessions,
        backoff: this.o.backoff,
        reuse_grace_ms: this.o.slot_reuse_grace_ms ?? 20
      })
      this.providers.set(provider, g)
    }
    return g
  }

  /** Concurrent sessions allowed now towards `host`. */
  sessionsFor(host: string, provider: string | null): number {
    return Math.min(this.hostGate(host, provider).concurrency, this.providerGate(provider)?.concurrency ?? Infinity, this.o.max_sessions)
  }

  /**
   * Waits until a session to `host` may open; returns its release function, which gives the
   * global slot back at once and the host's and the provider's `slot_reuse_grace_ms` later
   * (their gates' grace): the receiver still counts a closed session for a moment, our own
   * cap over all receivers does not.
   */
  async acquire(host: string, provider: string | null): Promise<() => void> {
    const receiver = [await this.hostGate(host, provider).acquire()]
    const pg = this.providerGate(provider)
    if (pg) receiver.push(await pg.acquire())
    const global = await this.global.acquire()
    return () => {
      global()
      for (const r of receiver.reverse()) r()
    }
  }

  /**
   * Waits until a session to the receiver at `ip` may open (at most `max_sessions_per_ip`
   * at once, whatever MX names lead there); returns its release, which gives the slot back
   * `slot_reuse_grace_ms` later. Taken after the host's, provider's and global slots (the
   * same order everywhere: no cycle). Memory: a gate per address with sessions open or waiting.
   */
  async acquireAddress(ip: string): Promise<() => void> {
    // A receiver that limited our recipient rate is left alone for its window, under any of its MX names.
    for (let until = this.pausedAddresses.get(ip) ?? 0; until > Date.now(); until = this.pausedAddresses.get(ip) ?? 0) await sleep(until - Date.now())
    this.pausedAddresses.delete(ip)
    let entry = this.addresses.get(ip)
    if (!entry) {
      const max = this.o.max_sessions_per_ip ?? 6
      entry = {
        gate: new Gate({ max_concurrent: max, rate_per_s: Infinity, burst: max, reuse_grace_ms: this.o.slot_reuse_grace_ms ?? 20 }),
        users: 0
      }
      this.addresses.set(ip, entry)
    }
    const e = entry
    e.users++
    const release = await e.gate.acquire()
    return () => {
      release()
      // Forgotten once nobody holds or waits for it (after the grace, so that the grace still counts).
      setTimeout(
        () => {
          if (--e.users === 0 && this.addresses.get(ip) === e) this.addresses.delete(ip)
        },
        (this.o.slot_reuse_grace_ms ?? 20) + 1
      ).unref()
    }
  }

  /** The receiver pushed back (421, 4.7.x): back off; returns the pause (ms). */
  pushBack(host: string, provider: string | null): number {
    this.providerGate(provider)?.pushBack()
    return this.hostGate(host, provider).pushBack()
  }

  /**
   * The receiver at `ip` (reached as `host`) limited our recipient rate: no session to it,
   * under any MX name, for its window (`rate_window_ms`). `answered`: recipients it answered
   * in the session before the limit; with none, the pause was too short for its window and
   * doubles, otherwise it is one window again.
   * @returns the pause (ms).
   */
  rateLimited(host: string, provider: string | null, ip: string, answered: number): number {
    this.providerGate(provider)?.pushBack()
    const pause = this.hostGate(host, provider).pushBack(this.o.rate_window_ms ?? 61_000, answered > 0)
    this.pausedAddresses.set(ip, Date.now() + pause)
    return pause
  }

  succeeded(host: string, provider: string | null): void {
    this.hostGate(host, provider).succeeded()
    this.providerGate(provider)?.succeeded()
  }
}
