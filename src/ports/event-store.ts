/**
 * Event store port: the semantics of EventStoreDB (streams with per-stream revisions,
 * optimistic concurrency by expected revision, one global order, catch-up subscriptions).
 * Every adapter (SQLite, EventStoreDB) passes test/eventstore.contract.ts.
 */

/** Metadata carried by every event (docs/design/architecture.md "Streams and events"). */
export interface EventMetadata {
  occurred_at: string
  actor?: string | null
  correlation_id?: string | null
  causation_id?: string | null
}

/** An event to append. `id` is a UUID; one is generated when absent. */
export interface NewEvent<T extends string = string, D = Record<string, unknown>> {
  id?: string
  type: T
  data: D
  metadata: EventMetadata
}

/** An event as read back from the store. */
export interface RecordedEvent<T extends string = string, D = Record<string, unknown>> {
  id: string
  stream: string
  /** 0-based revision of the event within its stream. */
  revision: number
  /** 1-based global position; strictly increasing in commit order. */
  position: number
  type: T
  data: D
  metadata: EventMetadata
  /** Characters of `data` as stored, where the adapter knows it: what batches of events are weighed by (memory bounds). */
  size?: number
}

/**
 * Expected revision of a stream before an append:
 * `no_stream` (must not exist), `stream_exists`, `any`, or the exact revision of its last event.
 */
export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | number

/** A slice of a stream (see `EventStore.readStream`). */
export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards'
  /** First revision to read (inclusive), in the reading direction. */
  from_revision?: number
  max_count?: number
}

export interface AppendResult {
  /** Revision of the last appended event. */
  next_expected_revision: number
  /** Global position of the last appended event. */
  position: number
}

/** Raised when the stream's actual revision differs from the expected one. */
/**
 * The store refused an append larger than it takes in one write (KurrentDB's
 * `MaxAppendSize`, 1 MiB by default; docker-compose.yml raises it to 8 MiB, above the
 * largest chunk a plan allows). Nothing was written; the same append will be refused again.
 */
export class AppendTooLargeError extends Error {
  readonly stream: string
  /** The store's limit, bytes. */
  readonly limit_bytes: number
  constructor(stream: string, limitBytes: number) {
    super(`the event store takes at most ${limitBytes} bytes in one append (stream ${stream})`)
    this.name = 'AppendTooLargeError'
    this.stream = stream
    this.limit_bytes = limitBytes
  }
}

export class WrongExpectedRevisionError extends Error {
  readonly stream: string
  readonly expected: ExpectedRevision
  /** Actual revision of the stream's last event, or -1 when the stream does not exist. */
  readonly actual: number
  constructor(stream: string, expected: ExpectedRevision, actual: number) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${actual}`)
    this.name = 'WrongExpectedRevisionError'
    this.stream = stream
    this.expected = expected
    this.actual = actual
  }
}

export interface Subscription {
  /**
   * Stops delivery; resolves once the handler is no longer running (so a handler must not
   * await the stop of its own subscription: it would wait for itself).
   */
  stop(): Promise<void>
}

export interface SubscribeOptions {
  /** Exclusive global position to start after (0 = from the beginning). */
  from_position: number
  /** Only events whose type is listed are delivered (others still advance the position). */
  event_types?: readonly string[]
  /** Called when the subscription has delivered everything stored at the time (caught up). */
  on_caught_up?: (position: number) => void
  /** Called after an event is skipped by the filter or handled, with its position. */
  on_checkpoint?: (position: number) => void
}

export interface EventStore {
  /**
   * Appends events atomically to one stream.
   * @throws WrongExpectedRevisionError when `expected_revision` does not hold.
   */
  append(stream: string, events: readonly NewEvent[], options: { expected_revision: ExpectedRevision }): Promise<AppendResult>
  /**
   * Events of a stream; `[]` when the stream does not exist. Without options: every event
   * in revision order. With options, a bounded slice (what commands read, so that their
   * cost does not grow with the stream's history):
   * - `direction: 'forwards'` (default): revisions `from_revision` (default 0) and up;
   * - `direction: 'backwards'`: revisions `from_revision` (default: the last one) and down,
   *   newest first;
   * - `max_count`: at most that many events.
   */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>
  /**
   * Events after `from_position` (exclusive) in global order, at most `max_count`, and no
   * more once the data of those taken reaches `max_bytes` characters (`size`; always one
   * event at least): a page of large events (batch chunks) stays small in memory.
   */
  readAll(options: { from_position: number; max_count: number; max_bytes?: number }): Promise<RecordedEvent[]>
  /** Global position of the last committed event (0 when empty). */
  headPosition(): Promise<number>
  /**
   * How many events come after `position`, counted up to `cap` (a lag, the size of a
   * history). Positions are not counts in every store (KurrentDB's are byte offsets of its
   * log): never subtract positions for a number of events, ask this. Cost: one query where
   * positions are one per event (SQLite, PostgreSQL); at most `cap` events read elsewhere.
   */
  countAfter(position: number, cap: number): Promise<number>
  /**
   * Catch-up then live subscription to all streams. The handler is called for one event
   * at a time in global order; a handler error stops the subscription and is reported to
   * `on_error`.
   */
  subscribeToAll(options: SubscribeOptions, handler: (event: RecordedEvent) => Promise<void> | void, on_error?: (err: unknown) => void): Subscription
  close(): Promise<void>
}
