import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { Metrics } from '../ports/metrics.ts'
import type { ProbeStats } from '../verifier/smtp-probe.ts'
import type { ErasureStatus } from './crypto/keystore.ts'
import type { EgressState } from '../verifier/egress-monitor.ts'

/**
 * The service's metrics in the Prometheus text format (`prom-client`), one registry per
 * role process, labelled with the role. Counters that the code increments as things
 * happen (requests, jobs, deferrals, webhook attempts) and values read at scrape time
 * from where they are kept (SMTP sessions and RCPTs of the engine, bus redeliveries,
 * relay and projection lag in events). Memory is bounded by the label sets: routes,
 * statuses, verdicts × reasons, providers, consumers.
 */
export class ServiceMetrics implements Metrics {
  readonly registry = new Registry()
  /** Request duration (s) by route (its pattern, never the raw URL), method and status. */
  readonly http: Histogram<'method' | 'route' | 'status'>
  /** Jobs and batch items that reached a terminal state in this process, by verdict, reason and environment (`failed` jobs: verdict `none`). */
  readonly jobs: Counter<'verdict' | 'reason' | 'environment'>
  /** Deferrals by reason (`greylisted`, `egress_blocked`). */
  readonly deferrals: Counter<'reason'>
  readonly readYourWritesTimeouts: Counter<never>
  /** Webhook delivery attempts by outcome: `delivered`, `retry` (failed, another is scheduled), `failed` (the last one failed), `test`. */
  readonly webhookAttempts: Counter<'outcome'>
  private readonly smtpSources: Array<() => ProbeStats> = []
  private readonly redeliverySources: Array<() => Readonly<Record<string, number>>> = []
  private readonly lagSources = new Map<string, () => Promise<number>>()
  private heldSource: (() => Promise<ReadonlyArray<{ consumer: string; state: string; count: number; oldest_due_at: string }>>) | null = null
  private flowsSource: (() => Promise<ReadonlyArray<{ flow: string; pending: number; oldest_s: number }>>) | null = null
  private erasureSource: (() => ErasureStatus) | null = null
  private waitsSource: (() => number) | null = null
  private egressSource: (() => EgressState) | null = null

  constructor(role: string) {
    const registers = [this.registry]
    this.registry.setDefaultLabels({ role })
    collectDefaultMetrics({ register: this.registry })
    this.http = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers
    })
    this.jobs = new Counter({
      name: 'verification_jobs_total',
      help: 'Verifications (jobs and batch items) that reached a terminal state, by verdict, reason and environment (live, test: sandbox)',
      labelNames: ['verdict', 'reason', 'environment'],
      registers
    })
    this.deferrals = new Counter({
      name: 'verification_job_deferrals_total',
      help: 'Jobs and batch items deferred, by reason (greylisted, egress_blocked)',
      labelNames: ['reason'],
      registers
    })
    this.readYourWritesTimeouts = new Counter({
      name: 'read_your_writes_timeouts_total',
      help: 'Answers to writes given before the read models had applied the write (the 5 s wait gave up; the answer carries Read-Your-Writes: timeout): the projections are late',
      registers
    })
    this.webhookAttempts = new Counter({ name: 'webhook_attempts_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers })
    const sources = this
    new Counter({
      name: 'smtp_sessions_total',
      help: 'SMTP sessions opened by the verification engine, by mail provider',
      labelNames: ['provider'],
      registers,
      collect() {
        this.reset()
        for (const [provider, n] of Object.entries(sources.smtpTotals())) this.inc({ provider }, n.sessions)
      }
    })
    new Counter({
      name: 'smtp_rcpt_total',
      help: 'RCPT TO commands asked by the verification engine, by mail provider',
      labelNames: ['provider'],
      registers,
      collect() {
        this.reset()
        for (const [provider, n] of Object.entries(sources.smtpTotals())) this.inc({ provider }, n.rcpts)
      }
    })
    new Counter({
      name: 'bus_redeliveries_total',
      help: 'Messages handed back for redelivery after their handler failed, by consumer',
      labelNames: ['consumer'],
      registers,
      collect() {
        this.reset()
        for (const source of sources.redeliverySources) for (const [consumer, n] of Object.entries(source())) this.inc({ consumer }, n)
      }
    })
    new Gauge({
      name: 'lag_events',
      help: 'Events committed but not yet handled, by consumer of the event store (relay, projections)',
      labelNames: ['consumer'],
      registers,
      async collect() {
        this.reset()
        for (const [consumer, lag] of sources.lagSources) this.set({ consumer }, Math.max(0, await lag()))
      }
    })
    new Gauge({
      name: 'held_deliveries',
      help: 'Bus deliveries kept for later (state waiting: a part held while egress fails, a grace, a retry) or given up (state dead: kept to be seen), by consumer',
      labelNames: ['consumer', 'state'],
      registers,
      async collect() {
        this.reset()
        for (const r of (await sources.heldSource?.()) ?? []) this.set({ consumer: r.consumer, state: r.state }, r.count)
      }
    })
    new Gauge({
      name: 'held_deliveries_oldest_seconds',
      help: 'Seconds since the oldest held delivery came due (negative: none is due yet), by consumer and state: one that keeps growing is stuck',
      labelNames: ['consumer', 'state'],
      registers,
      async collect() {
        this.reset()
        for (const r of (await sources.heldSource?.()) ?? [])
          this.set({ consumer: r.consumer, state: r.state }, Math.round((Date.now() - Date.parse(r.oldest_due_at)) / 1000))
      }
    })
    new Gauge({
      name: 'flow_reactions_pending',
      help: 'Flow reactions begun and not confirmed finished (their trigger not yet delivered, or its delivery held or given up), by flow',
      labelNames: ['flow'],
      registers,
      async collect() {
        this.reset()
        for (const f of (await sources.flowsSource?.()) ?? []) this.set({ flow: f.flow }, f.pending)
      }
    })
    new Gauge({
      name: 'flow_reaction_oldest_seconds',
      help: "Seconds since the oldest pending reaction's trigger was committed (or its held delivery came due), by flow: one past the flow's bound is stuck (svc doctor, svc audit)",
      labelNames: ['flow'],
      registers,
      async collect() {
        this.reset()
        for (const f of (await sources.flowsSource?.()) ?? []) this.set({ flow: f.flow }, f.oldest_s)
      }
    })
    new Counter({
      name: 'smtp_route_sessions_total',
      help: 'SMTP sessions connected by the verification engine, by egress route (direct or through its SOCKS5 proxy)',
      labelNames: ['route'],
      registers,
      collect() {
        this.reset()
        for (const [route, n] of Object.entries(sources.routeTotals())) this.inc({ route }, n.sessions)
      }
    })
    new Counter({
      name: 'smtp_proxy_errors_total',
      help: "Connections an egress route's SOCKS5 proxy failed (results `proxy_error`), by route",
      labelNames: ['route'],
      registers,
      collect() {
        this.reset()
        for (const [route, n] of Object.entries(sources.routeTotals())) this.inc({ route }, n.proxy_errors)
      }
    })
    new Gauge({
      name: 'egress_up',
      help: 'Whether the last egress self-test got a banner from the test MX on port 25 through each route (1) or not (0)',
      labelNames: ['route'],
      registers,
      collect() {
        this.reset()
        const state = sources.egressSource?.()
        if (state?.checked_at) for (const r of state.routes) this.set({ route: r.route }, r.ok ? 1 : 0)
      }
    })
    new Gauge({
      name: 'egress_dns_up',
      help: 'Whether the configured resolvers answered for the test MX in the last egress self-test (1) or not (0)',
      registers,
      collect() {
        this.reset()
        const state = sources.egressSource?.()
        if (state?.checked_at) this.set(state.dns.ok ? 1 : 0)
      }
    })
    new Gauge({
      name: 'http_waits_pending',
      help: 'Reads waiting for a job or a batch to end (?wait=)',
      registers,
      collect() {
        this.set(sources.waitsSource?.() ?? 0)
      }
    })
    new Gauge({
      name: 'erasure_scrubs_pending',
      help: "Data keys destroyed (account erasures) whose old bytes may still be in keys.db's write-ahead log: a reader is holding it",
      registers,
      collect() {
        this.set(sources.erasureSource?.().pending ?? 0)
      }
    })
    new Gauge({
      name: 'erasure_scrub_pending_seconds',
      help: 'How long the oldest unfinished erasure scrub has waited (0 when none)',
      registers,
      collect() {
        const since = sources.erasureSource?.().pending_since ?? null
        this.set(since === null ? 0 : (Date.now() - since) / 1000)
      }
    })
    new Counter({
      name: 'erasure_scrub_stalled_total',
      help: 'Erasure scrubs reported late (the write-ahead log held past the reporting threshold)',
      registers,
      collect() {
        this.reset()
        this.inc(sources.erasureSource?.().stalled_reports ?? 0)
      }
    })
  }

  private smtpTotals(): Record<string, { sessions: number; rcpts: number }> {
    return this.sum(s => s.by_provider)
  }

  private routeTotals(): Record<string, { sessions: number; proxy_errors: number }> {
    return this.sum(s => s.by_route)
  }

  /** One table of counts (by provider, by route) summed over every engine this process runs, key by key. */
  private sum<T extends Record<string, number>>(table: (stats: ProbeStats) => Record<string, T>): Record<string, T> {
    const out: Record<string, Record<string, number>> = {}
    for (const source of this.smtpSources) {
      for (const [key, counts] of Object.entries(table(source()))) {
        const total = (out[key] ??= {})
        for (const [name, n] of Object.entries(counts)) total[name] = (total[name] ?? 0) + n
      }
    }
    return out as Record<string, T>
  }

  /** Reads an engine's SMTP counters at each scrape. */
  watchSmtp(stats: () => ProbeStats): void {
    this.smtpSources.push(stats)
  }
  /** Reads a bus's redelivery counts at each scrape. */
  watchRedeliveries(counts: () => Readonly<Record<string, number>>): void {
    this.redeliverySources.push(counts)
  }
  /** Reads the egress self-test's state at each scrape. */
  watchEgress(state: () => EgressState): void {
    this.egressSource = state
  }
  /** Reads how many reads wait for a job or batch to end, at each scrape. */
  watchWaits(pending: () => number): void {
    this.waitsSource = pending
  }
  /** Reads the data key store's erasure scrubs at each scrape. */
  watchErasures(status: () => ErasureStatus): void {
    this.erasureSource = status
  }
  /** Reads how many events `consumer` has yet to handle at each scrape. */
  watchLag(consumer: string, lag: () => Promise<number>): void {
    this.lagSources.set(consumer, lag)
  }
  /** Reads the held deliveries' counts and oldest due times at each scrape. */
  /** The flows' pending reactions (`flow_reactions_pending`, `flow_reaction_oldest_seconds`): a flow with none is absent. */
  watchFlows(summary: () => Promise<ReadonlyArray<{ flow: string; pending: number; oldest_s: number }>>): void {
    this.flowsSource = summary
  }

  watchHeld(summary: () => Promise<ReadonlyArray<{ consumer: string; state: string; count: number; oldest_due_at: string }>>): void {
    this.heldSource = summary
  }

  /** The media type of the text exposition. */
  get contentType(): string {
    return this.registry.contentType
  }

  /** The text exposition (content type `registry.contentType`). */
  async text(): Promise<string> {
    return await this.registry.metrics()
  }
}
