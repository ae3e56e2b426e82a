import {
  KurrentDBClient,
  jsonEvent,
  START,
  END,
  BACKWARDS,
  FORWARDS,
  NO_STREAM,
  ANY,
  STREAM_EXISTS,
  WrongExpectedVersionError,
  MaxAppendSizeExceededError,
  StreamNotFoundError,
  UnavailableError,
  CancelledError,
  DeadlineExceededError,
  NotLeaderError,
  TimeoutError,
  excludeSystemEvents,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type Position,
  type ResolvedEvent
} from '@kurrent/kurrentdb-client'
import { AppendTooLargeError, WrongExpectedRevisionError } from '../../ports/event-store.ts'
import type * as port from '../../ports/event-store.ts'
import { randomUUID } from 'node:crypto'

/** What the adapter uses of the client (a test drives the adapter with the client's own `Subscription` behind it). */
export type KurrentClient = Pick<KurrentDBClient, 'appendToStream' | 'readStream' | 'readAll' | 'subscribeToAll' | 'dispose'>

/** Records of `$all` one read takes at most (a page of `readAll`). */
const READ_PAGE = 1_000
/** Records of `$all` one backwards read takes looking for our last event. */
const HEAD_PAGE = 64

/** Global position of our port ↔ the commit position of the transaction log. */
const toPosition = (p: Position | undefined): number => (p ? Number(p.commit) : 0)
const fromPosition = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })

/** Our event, or null for the server's own (system streams and types start with `$`). */
function toRecorded(r: ResolvedEvent | AllStreamResolvedEvent, sized = false): port.RecordedEvent | null {
  const e = r.event
  if (!e || e.type.startsWith('$') || e.streamId.startsWith('$')) return null
  const data = e.data as Record<string, unknown>
  return {
    id: e.id,
    stream: e.streamId,
    revision: Number(e.revision),
    position: toPosition(e.position),
    type: e.type,
    data,
    metadata: (e.metadata ?? { occurred_at: e.created.toISOString() }) as unknown as port.RecordedEvent['metadata'],
    // What pages and windows are weighed by (the client does not keep the raw length).
    ...(sized && { size: JSON.stringify(data).length })
  }
}

function streamState(expected: port.ExpectedRevision): typeof NO_STREAM | typeof ANY | typeof STREAM_EXISTS | bigint {
  if (expected === 'no_stream') return NO_STREAM
  if (expected === 'any') return ANY
  if (expected === 'stream_exists') return STREAM_EXISTS
  return BigInt(expected)
}

/**
 * Errors after which a subscription is made again and nothing is reported: the server or
 * the connection went away or moved (the client's own error classes).
 */
export function isTransient(err: unknown): boolean {
  return (
    err instanceof UnavailableError ||
    err instanceof CancelledError ||
    err instanceof DeadlineExceededError ||
    err instanceof NotLeaderError ||
    err instanceof TimeoutError
  )
}

/**
 * `esdb://` and `esdb+discover://` are the deprecated spellings of `kurrentdb://` (the
 * client warns on each connection): the same string in the current scheme.
 */
export function currentScheme(connectionString: string): string {
  return connectionString.replace(/^esdb(\+discover)?:\/\//, (_m, discover: string | undefined) => `kurrentdb${discover ?? ''}://`)
}

/**
 * Things the subscription loop puts into the client's stream itself, in order with the
 * events: the client calls `checkpointReached` and emits `caughtUp` as soon as the server
 * sends them, while events received before them may still wait in the stream's buffer.
 */
type Marker = { marker: 'checkpoint'; position: number } | { marker: 'caught_up' }
const isMarker = (x: unknown): x is Marker => typeof x === 'object' && x !== null && 'marker' in x

export interface KurrentEventStoreOptions {
  /** Pause before the first new subscription after a drop (ms); doubles per failed attempt up to `retry_max_ms`. */
  retry_min_ms?: number
  retry_max_ms?: number
  /** Where errors that are not transient (and are retried all the same) are told. */
  log?: (msg: string, err: unknown) => void
}

/**
 * Event store on EventStoreDB / KurrentDB (`EVENTSTORE_URL`, `kurrentdb://` — `esdb://` is
 * taken in the current scheme —, `?tls=false` for local servers) with the official client.
 * Thin: streams, revisions and expected-revision checks are the server's own; global
 * positions are commit positions of the transaction log.
 *
 * `subscribeToAll` delivers every event to the handler once, in order, and advances its
 * position only after the handler returned: system events are left out by the server,
 * the port's event types are filtered in the loop (so `on_checkpoint` comes for every
 * event, handled or skipped, as read-your-writes needs), and the server's checkpoints and
 * caught-up signal are put into the client's stream behind the events received before
 * them, so neither runs ahead of the handler. A dropped subscription (any error that is
 * not the handler's; transient ones, by the client's error classes, quietly) is cancelled
 * and made again from the last position, after a pause that `stop` cuts short; a handler
 * error stops it and goes to `on_error`. Cost: one stream per subscription; memory: the
 * client's stream buffer (16 events).
 *
 * `on_caught_up` comes from the server's caught-up message, which servers before 23.10 do
 * not send (older ones never report caught up: readiness would wait). An append over the
 * server's `MaxAppendSize` is an AppendTooLargeError (the API's 413). Reads of `$all` are
 * bounded (`maxCount`) and read to their end, so none stays open on the server.
 *
 * Not run against a live server in this repository's CI (none can be installed there); it
 * passes the event store contract suite wherever `EVENTSTORE_URL` is set, and
 * test/infra/eventstore/kurrentdb-subscription.test.ts drives the subscription loop with the
 * client's own `Subscription` over real protocol messages.
 */
export class KurrentEventStore implements port.EventStore {
  private readonly client: KurrentClient
  private readonly subs = new Set<{ stop: () => Promise<void> }>()
  private readonly retryMin: number
  private readonly retryMax: number
  private readonly log: (msg: string, err: unknown) => void

  constructor(connection: string | KurrentClient, options: KurrentEventStoreOptions = {}) {
    this.client = typeof connection === 'string' ? KurrentDBClient.connectionString(currentScheme(connection)) : connection
    this.retryMin = options.retry_min_ms ?? 100
    this.retryMax = options.retry_max_ms ?? 10_000
    this.log =
      options.log ??
      ((msg, err) => {
        console.error(msg, err)
      })
  }

  async append(stream: string, events: readonly port.NewEvent[], options: { expected_revision: port.ExpectedRevision }): Promise<port.AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event')
    try {
      const r = await this.client.appendToStream(
        stream,
        events.map(e =>
          jsonEvent({ id: e.id ?? randomUUID(), type: e.type, data: e.data as Record<string, never>, metadata: e.metadata as unknown as Record<string, never> })
        ),
        { streamState: streamState(options.expected_revision) }
      )
      return { next_expected_revision: Number(r.nextExpectedRevision), position: toPosition(r.position) }
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        const actual = typeof err.actualState === 'bigint' ? Number(err.actualState) : -1
        throw new WrongExpectedRevisionError(stream, options.expected_revision, actual)
      }
      if (err instanceof MaxAppendSizeExceededError) throw new AppendTooLargeError(stream, err.maxAppendSize)
      throw err
    }
  }

  async readStream(stream: string, options: port.ReadStreamOptions = {}): Promise<port.RecordedEvent[]> {
    const out: port.RecordedEvent[] = []
    const backwards = options.direction === 'backwards'
    const from = options.from_revision === undefined ? (backwards ? END : START) : BigInt(options.from_revision)
    try {
      for await (const r of this.client.readStream(stream, {
        fromRevision: from,
        direction: backwards ? BACKWARDS : FORWARDS,
        ...(options.max_count !== undefined && { maxCount: options.max_count })
      })) {
        const e = toRecorded(r)
        if (e) out.push(e)
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return []
      throw err
    }
    return out
  }

  /**
   * One read of `$all` of at most `n` records (system events included) from `from`
   * (inclusive), consumed to its end: a read bounded by `maxCount` ends on the server by
   * itself, where leaving a `for await` early would not (the client's stream has no
   * `return()`). Memory: `n` records.
   */
  private async readRecords(
    from: Position | typeof START | typeof END,
    direction: typeof FORWARDS | typeof BACKWARDS,
    n: number
  ): Promise<AllStreamResolvedEvent[]> {
    const out: AllStreamResolvedEvent[] = []
    for await (const r of this.client.readAll({ fromPosition: from, direction, maxCount: n })) out.push(r)
    return out
  }

  /**
   * Reads `$all` forwards in bounded reads (READ_PAGE records each) and stops once it holds
   * `max_count` of our events or `max_bytes` of their data (always one at least): system
   * events in between do not end a page early, so an empty page means the end of the log.
   * Cost: the events read, plus the system events among them, in reads of READ_PAGE.
   */
  async readAll(options: { from_position: number; max_count: number; max_bytes?: number }): Promise<port.RecordedEvent[]> {
    const out: port.RecordedEvent[] = []
    const maxBytes = options.max_bytes ?? Number.MAX_SAFE_INTEGER
    let bytes = 0
    let from: Position | typeof START = options.from_position === 0 ? START : fromPosition(options.from_position)
    let after = options.from_position
    for (;;) {
      const n = Math.min(READ_PAGE, options.max_count + 1)
      const records = await this.readRecords(from, FORWARDS, n)
      for (const r of records) {
        const e = toRecorded(r, true)
        if (!e || e.position <= after) continue
        if (out.length > 0 && bytes >= maxBytes) return out
        out.push(e)
        bytes += e.size ?? 0
        if (out.length >= options.max_count) return out
      }
      const last = records[records.length - 1]?.event?.position
      // A short read is the end of the log; the next read starts at the last record (inclusive: skipped by position).
      if (records.length < n || !last || toPosition(last) <= after) return out
      after = Math.max(after, toPosition(last))
      from = last
    }
  }

  /** Position of our last event: `$all` read backwards in bounded reads past any system events after it. Cost: those system events. */
  async headPosition(): Promise<number> {
    let from: Position | typeof END = END
    for (;;) {
      const records = await this.readRecords(from, BACKWARDS, HEAD_PAGE)
      for (const r of records) {
        const e = toRecorded(r)
        if (e) return e.position
      }
      const last = records[records.length - 1]?.event?.position
      if (records.length < HEAD_PAGE || !last || (from !== END && toPosition(last) >= toPosition(from))) return 0
      from = last
    }
  }

  /**
   * Our events after `position`, counted up to `cap` by reading them (positions here are
   * byte offsets of the log, never a count). Cost: at most `cap` events and the system
   * events among them, in bounded reads.
   */
  async countAfter(position: number, cap: number): Promise<number> {
    if (cap <= 0) return 0
    return (await this.readAll({ from_position: position, max_count: cap, max_bytes: Number.MAX_SAFE_INTEGER })).length
  }

  subscribeToAll(
    options: port.SubscribeOptions,
    handler: (event: port.RecordedEvent) => Promise<void> | void,
    onError?: (err: unknown) => void
  ): port.Subscription {
    let position = options.from_position
    let stopped = false
    let caughtUp = false
    let current: AllStreamSubscription | null = null
    let wake: (() => void) | null = null
    const types = options.event_types ? new Set(options.event_types) : null
    const pause = (ms: number): Promise<void> =>
      new Promise(resolve => {
        const timer = setTimeout(() => {
          wake = null
          resolve()
        }, ms)
        wake = () => {
          clearTimeout(timer)
          wake = null
          resolve()
        }
      })

    const run = async (): Promise<void> => {
      let attempt = 0
      while (!stopped) {
        const sub = this.client.subscribeToAll({
          fromPosition: position === 0 ? START : fromPosition(position),
          // Checkpoints come at least every 32 system events the filter skips (multiplier 1 × the default window).
          // Both signals go behind the events the stream already holds (see Marker).
          filter: excludeSystemEvents({
            checkpointInterval: 1,
            checkpointReached: (s, p) => {
              s.push({ marker: 'checkpoint', position: toPosition(p) } satisfies Marker)
            }
          })
        })
        current = sub
        sub.on('caughtUp', () => {
          sub.push({ marker: 'caught_up' } satisfies Marker)
        })
        let handlerError: { err: unknown } | null = null
        try {
          for await (const item of sub as AsyncIterable<AllStreamResolvedEvent | Marker>) {
            if (stopped) break
            if (isMarker(item)) {
              if (item.marker === 'checkpoint') {
                if (item.position > position) {
                  position = item.position
                  options.on_checkpoint?.(position)
                }
              } else if (!caughtUp) {
                caughtUp = true
                options.on_caught_up?.(position)
              }
              continue
            }
            const e = toRecorded(item, true)
            if (e === null || e.position <= position) continue
            if (types === null || types.has(e.type)) {
              try {
                await handler(e)
              } catch (err) {
                handlerError = { err }
                break
              }
            }
            position = e.position
            options.on_checkpoint?.(position)
            attempt = 0
          }
        } catch (err) {
          if (!stopped && !isTransient(err)) this.log('event store subscription dropped; subscribing again', err)
        } finally {
          current = null
          await sub.unsubscribe().catch(() => undefined)
          sub.destroy()
        }
        if (handlerError) throw handlerError.err
        if (stopped) return
        attempt++
        await pause(Math.min(this.retryMax, this.retryMin * 2 ** (attempt - 1)))
      }
    }
    const done = run().catch(err => {
      if (!stopped)
        (
          onError ??
          (e => {
            console.error('subscription failed', e)
          })
        )(err)
    })
    const handle = {
      stop: async () => {
        stopped = true
        wake?.()
        // Ends the loop's wait for the next message; the handler, if running, finishes first.
        current?.destroy()
        await done
        this.subs.delete(handle)
      }
    }
    this.subs.add(handle)
    return handle
  }

  async close(): Promise<void> {
    for (const s of [...this.subs]) await s.stop()
    await this.client.dispose()
  }
}
