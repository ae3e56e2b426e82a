import type { RecordedEvent } from './event-store.ts'

/**
 * Message handler of a bus consumer. Resolving acknowledges the message; throwing asks
 * for redelivery later (NATS `nak` with delay). Handlers must be idempotent: a message
 * can be delivered more than once.
 */
export type BusHandler = (event: RecordedEvent) => Promise<void>

/**
 * Thrown by a handler that cannot do its work yet (a greylisting retry that is not due):
 * the message comes back after `delay_ms` without counting as a failure.
 */
export class RetryLater extends Error {
  readonly delay_ms: number
  constructor(delayMs: number) {
    super(`retry in ${delayMs} ms`)
    this.name = 'RetryLater'
    this.delay_ms = Math.max(0, Math.round(delayMs))
  }
}

export interface ConsumerOptions {
  /** Durable consumer name, one per service (`verifier`, `mailer`, `webhooks`). */
  name: string
  /** Event types this consumer receives. */
  event_types: readonly string[]
  /** Messages handled at once by this process. */
  concurrency: number
  /** Deliveries before a failing message is given up (NATS `term`). */
  max_deliveries?: number
  /**
   * Messages delivered but not yet acknowledged, those waiting out a `RetryLater` included
   * (NATS `max_ack_pending`; default max(1000, 4 × concurrency)). A consumer whose
   * messages wait long (scheduled retries) needs room for all of them.
   */
  max_pending?: number
}

export interface Consumer {
  /** Why it is not consuming now (its subscription failed and is being renewed), or null. Absent: it cannot fail so. */
  readonly problem?: string | null
  stop(): Promise<void>
}

/** Fan-out of committed events to services (docs/design/architecture.md "Fan-out"). */
export interface Bus {
  /**
   * Publishes one committed event. Resolves when the bus has taken responsibility for it:
   * persisted (NATS JetStream) or handled by every consumer (in-process).
   * Publishing an event id twice delivers it once (dedup by event id).
   */
  publish(event: RecordedEvent): Promise<void>
  consume(options: ConsumerOptions, handler: BusHandler): Promise<Consumer>
  /** Messages handed back for redelivery after their handler failed, per consumer, since this process started (`/metrics`). */
  redeliveries(): Readonly<Record<string, number>>
  close(): Promise<void>
}
