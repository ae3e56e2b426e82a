/**
 * Bus deliveries that wait, kept where a restart finds them:
 * a message whose handler asked to be asked again later (a batch part held while egress
 * fails, a chunk's grace, a greylisting retry) and a message given up after its last
 * delivery (a dead letter, kept to be seen, never dropped). The in-process bus writes one
 * before it lets the relay's checkpoint pass the event, and delivers it again from here
 * after a restart; NATS keeps its own (a `nak` with delay).
 */
export interface HeldDelivery {
  /** The consumer (service) it waits for: `batches`, `intake`, … */
  consumer: string
  event_id: string
  /** Where the event is read again: its stream and revision. */
  stream: string
  revision: number
  type: string
  /** When it is delivered again (RFC 3339); for a dead letter, when it was given up. */
  due_at: string
  /** Deliveries so far. */
  attempts: number
  state: 'waiting' | 'dead'
  last_error: string | null
}

export interface HeldDeliveries {
  /** Keeps (or replaces) the delivery of `event_id` to `consumer`. */
  holdDelivery(h: HeldDelivery): Promise<void>
  /** Forgets it: its handler succeeded. */
  releaseDelivery(consumer: string, eventId: string): Promise<void>
  /** What `consumer` has waiting, soonest first (bounded by what is held, never by the log). */
  heldDeliveries(consumer: string, state: HeldDelivery['state']): Promise<HeldDelivery[]>
  /** Counts and the oldest due time per consumer and state (`/metrics`, `svc audit`). */
  heldSummary(): Promise<Array<{ consumer: string; state: HeldDelivery['state']; count: number; oldest_due_at: string }>>
}
