import {
  KurrentDBClient, jsonEvent, START, END, BACKWARDS, FORWARDS, NO_STREAM, ANY, STREAM_EXISTS,
  WrongExpectedVersionError, StreamNotFoundError, excludeSystemEvents, eventTypeFilter,
  type ResolvedEvent, type Position
} from '@kurrent/kurrentdb-client'
import {
  WrongExpectedRevisionError,
  type AppendResult, type EventStore, type ExpectedRevision, type NewEvent,
  type ReadStreamOptions, type RecordedEvent, type SubscribeOptions, type Subscription
} from './port.ts'
import { randomUUID } from 'node:crypto'

/** Global position of our port ↔ the commit position of the transaction log. */
const toPosition = (p: Position | undefined): number => p ? Number(p.commit) : 0
const fromPosition = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })

function toRecorded (r: ResolvedEvent): RecordedEvent | null {
  const e = r.event
  if (!e || e.type.startsWith('$') || e.streamId.startsWith('$')) return null
  return {
    id: e.id,
    stream: e.streamId,
    revision: Number(e.revision),
    position: toPosition(e.position),
    type: e.type,
    data: e.data as Record<string, unknown>,
    metadata: (e.metadata ?? { occurred_at: e.created.toISOString() }) as unknown as RecordedEvent['metadata']
  }
}

function streamState (expected: ExpectedRevision): typeof NO_STREAM | typeof ANY | typeof STREAM_EXISTS | bigint {
  if (expected === 'no_stream') return NO_STREAM
  if (expected === 'any') return ANY
  if (expected === 'stream_exists') return STREAM_EXISTS
  return BigInt(expected)
}

/**
 * Event store on EventStoreDB / KurrentDB (`EVENTSTORE_URL`, `esdb://` or `kurrentdb://`,
 * `?tls=false` for local servers) with the official client. Thin: streams, revisions and
 * expected-revision checks are the server's own; global positions are commit positions of
 * the transaction log; `subscribeToAll` runs from an exclusive checkpoint with a
 * server-side event-type filter (system events excluded), reports checkpoints the server
 * sends while filtering, and resubscribes from the last position after a drop. Leader
 * preference on clusters comes from the connection string (`nodePreference=leader`, the
 * client's default).
 * Not run against a live server in this repository's CI (none can be installed there);
 * it passes the event store contract suite wherever `EVENTSTORE_URL` is set.
 */
export class KurrentEventStore implements EventStore {
  private readonly client: KurrentDBClient
  private readonly subs = new Set<{ stop: () => Promise<void> }>()

  constructor (connectionString: string) {
    this.client = KurrentDBClient.connectionString(connectionString)
  }

  async append (stream: string, events: readonly NewEvent[], options: { expected_revision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event')
    try {
      const r = await this.client.appendToStream(stream, events.map(e => jsonEvent({ id: e.id ?? randomUUID(), type: e.type, data: e.data as Record<string, never>, metadata: e.metadata as unknown as Record<string, never> })), { streamState: streamState(options.expected_revision) })
      return { next_expected_revision: Number(r.nextExpectedRevision), position: toPosition(r.position) }
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        const actual = typeof err.actualState === 'bigint' ? Number(err.actualState) : -1
        throw new WrongExpectedRevisionError(stream, options.expected_revision, actual)
      }
      throw err
    }
  }

  async readStream (stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = []
    const backwards = options.direction === 'backwards'
    const from = options.from_revision === undefined ? (backwards ? END : START) : BigInt(options.from_revision)
    try {
      for await (const r of this.client.readStream(stream, { fromRevision: from, direction: backwards ? BACKWARDS : FORWARDS, ...(options.max_count !== undefined && { maxCount: options.max_count }) })) {
        const e = toRecorded(r)
        if (e) out.push(e)
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return []
      throw err
    }
    return out
  }

  async readAll (options: { from_position: number, max_count: number, max_bytes?: number }): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = []
    const from = options.from_position === 0 ? START : fromPosition(options.from_position)
    for await (const r of this.client.readAll({ fromPosition: from, direction: FORWARDS, maxCount: options.max_count + 1 })) {
      const e = toRecorded(r)
      if (e && e.position > options.from_position) out.push(e)
      if (out.length >= options.max_count) break
    }
    return out
  }

  async headPosition (): Promise<number> {
    for await (const r of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 64 })) {
      const e = toRecorded(r)
      if (e) return e.position
    }
    return 0
  }

  subscribeToAll (options: SubscribeOptions, handler: (event: RecordedEvent) => Promise<void> | void, onError?: (err: unknown) => void): Subscription {
    let position = options.from_position
    let stopped = false
    let current: ReturnType<KurrentDBClient['subscribeToAll']> | null = null
    const run = async (): Promise<void> => {
      let attempt = 0
      while (!stopped) {
        const filter = options.event_types
          ? eventTypeFilter({ regex: `^(${options.event_types.map(t => t.replace(/[^A-Za-z0-9_]/g, '')).join('|')})$`, checkpointInterval: 1, checkpointReached: (_s, p) => { position = Math.max(position, toPosition(p)); options.on_checkpoint?.(position) } })
          : excludeSystemEvents({ checkpointInterval: 1, checkpointReached: (_s, p) => { position = Math.max(position, toPosition(p)); options.on_checkpoint?.(position) } })
        const sub = this.client.subscribeToAll({ fromPosition: position === 0 ? START : fromPosition(position), filter })
        current = sub
        sub.on('caughtUp', () => { options.on_caught_up?.(position) })
        try {
          for await (const r of sub) {
            if (stopped) break
            const e = toRecorded(r)
            if (!e || e.position <= position) continue
            await handler(e)
            position = e.position
            options.on_checkpoint?.(position)
            attempt = 0
          }
          if (stopped) return
        } catch (err) {
          if (stopped) return
          // A dropped subscription resubscribes from the last position; a handler error stops it.
          if (!(err instanceof Error) || !/UNAVAILABLE|CANCELLED|DEADLINE|ECONNRESET|drop|closed/i.test(err.message)) throw err
        }
        attempt++
        await new Promise(resolve => setTimeout(resolve, Math.min(10_000, 100 * 2 ** attempt)))
      }
    }
    const done = run().catch(err => { if (!stopped) (onError ?? (e => { console.error('subscription failed', e) }))(err) })
    const handle = {
      stop: async () => {
        stopped = true
        await current?.unsubscribe().catch(() => undefined)
        await done
        this.subs.delete(handle)
      }
    }
    this.subs.add(handle)
    return handle
  }

  /** Relay checkpoints: the last event of stream `checkpoint-<name>` (kept to one event). */
  async getCheckpoint (name: string): Promise<number> {
    try {
      for await (const r of this.client.readStream(`checkpoint-${name}`, { fromRevision: END, direction: BACKWARDS, maxCount: 1 })) {
        return Number((r.event?.data as { position?: number } | undefined)?.position ?? 0)
      }
    } catch (err) {
      if (!(err instanceof StreamNotFoundError)) throw err
    }
    return 0
  }

  async setCheckpoint (name: string, position: number): Promise<void> {
    const stream = `checkpoint-${name}`
    await this.client.appendToStream(stream, jsonEvent({ type: 'CheckpointStored', data: { position } }))
    if (!this.capped.has(stream)) {
      await this.client.setStreamMetadata(stream, { maxCount: 1 })
      this.capped.add(stream)
    }
  }

  private readonly capped = new Set<string>()

  async close (): Promise<void> {
    for (const s of [...this.subs]) await s.stop()
    await this.client.dispose()
  }
}
