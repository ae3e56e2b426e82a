/** A Prometheus counter as the code increments it (prom-client's `Counter` is one). */
interface MetricCounter<L extends string> {
  inc(labels?: Partial<Record<L, string | number>>, value?: number): void
}

/**
 * The metrics a role's code records and serves (the prom-client adapter is
 * `ServiceMetrics`, src/infra/metrics.ts). Memory is bounded by the label sets: routes,
 * statuses, verdicts × reasons, outcomes.
 */
export interface Metrics {
  /** Request duration (s) by route (its pattern, never the raw URL), method and status. */
  readonly http: { observe(labels: Record<'method' | 'route' | 'status', string>, seconds: number): void }
  /** Jobs and batch items that reached a terminal state in this process, by verdict, reason and environment (`live`, `test`: sandbox). */
  readonly jobs: MetricCounter<'verdict' | 'reason' | 'environment'>
  /** Deferrals (JobDeferred, BatchItemsDeferred appended) by reason: `greylisted`, `egress_blocked`. */
  readonly deferrals: MetricCounter<'reason'>
  /** Answers to writes that went out before the read models had applied the write (read-your-writes gave up after its bound). */
  readonly readYourWritesTimeouts: MetricCounter<never>
  /** Webhook delivery attempts by outcome: `delivered`, `retry`, `failed`, `test`. */
  readonly webhookAttempts: MetricCounter<'outcome'>
  /** The media type of `text()` (Prometheus text exposition format). */
  readonly contentType: string
  /** Every metric of this role in the text exposition format. */
  text(): Promise<string>
}
