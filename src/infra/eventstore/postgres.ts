import { EventEmitter } from 'node:events'
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import {
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription
} from '../../ports/event-store.ts'
import { followLog } from './follow.ts'
import type { PendingAppend } from './pending-append.ts'
import { StorePool } from '../postgres/pool.ts'
import { migrated } from '../postgres/schema.ts'
import { Listener } from '../postgres/listener.ts'

/** How often (ms) the head is read while a LISTEN connection is open: a notification lost with its connection is made up for. */
const LISTENING_POLL_MS = 1_000

/**
 * The key of the transaction-scoped advisory lock every append takes (`pg_advisory_xact_lock`):
 * one group of appends commits at a time, so positions are given in commit order.
 */
const APPEND_LOCK = 7_261_001

const COLUMNS = 'position, id, stream, revision, type, data, metadata'

interface Row {
  position: string
  id: string
  stream: string
  revision: number
  type: string
  data: string
  metadata: string
}

function toRecorded(r: Row): RecordedEvent {
  return {
    id: r.id,
    stream: r.stream,
    revision: r.revision,
    position: Number(r.position),
    type: r.type,
    data: JSON.parse(r.data) as Record<string, unknown>,
    metadata: JSON.parse(r.metadata) as RecordedEvent['metadata'],
    size: r.data.length
  }
}

export interface PostgresEventStoreOptions {
  /** The schema the tables live in (created when absent); default `public`. */
  schema?: string
  /** Connections of the pool (default 4: one commits at a time; the others read), when it makes its own. */
  pool_size?: number
  /** The pool of the process's PostgreSQL stores (not ended by `close`); else the store makes its own. */
  pool?: StorePool
  /**
   * How often (ms) a live subscription looks for appends made by other processes while it
   * has no LISTEN connection; with one, it still looks every second (a notification lost
   * with its connection is made up for).
   */
  poll_interval_ms?: number
  /** Whether appends NOTIFY and subscriptions LISTEN (default true): other processes see an append at once rather than at the next poll. */
  notify?: boolean
  /** Events read per page by subscriptions. */
  batch_size?: number
}

/**
 * The event store on PostgreSQL (node-postgres, a pool of `pool_size` connections).
 * Appends: those asked for in one turn of the event loop commit together in one
 * transaction that first takes the advisory lock APPEND_LOCK, so that groups commit one at
 * a time across every process on the database; each append is checked against its stream's
 * last revision under that lock (exact for two concurrent `no_stream` appends) inside a
 * savepoint of its own, and its events take the positions after the head. Positions are
 * therefore given in commit order, with no gap: a reader following the log never skips an
 * event committed late, nor reads one twice. Cost of a group: the head and each stream's last
 * revision by index, and the inserts. Subscriptions read pages after their position; they
 * wake at once on this process's appends and within `poll_interval_ms` on other processes'.
 */
export class PostgresEventStore implements EventStore {
  private readonly pool: StorePool
  private readonly owns: boolean
  private readonly schema: string
  private readonly emitter = new EventEmitter()
  private readonly pollMs: number
  private readonly batchSize: number
  private queue: PendingAppend[] = []
  private running: Promise<void> = Promise.resolve()
  private scheduled = false
  private closed = false
  private poller: NodeJS.Timeout | null = null
  private readonly notify: boolean
  /** The channel appends are announced on (one per schema). */
  private readonly channel: string
  /** The LISTEN connection's loop, once a subscription follows the log. */
  private listener: Listener | null = null

  constructor(url: string, options: PostgresEventStoreOptions = {}) {
    this.schema = options.schema ?? 'public'
    this.pollMs = options.poll_interval_ms ?? 100
    this.notify = options.notify ?? true
    this.channel = `svc_events_${this.schema}`
    this.batchSize = options.batch_size ?? 500
    this.owns = options.pool === undefined
    this.pool = options.pool ?? new StorePool(url, { max: options.pool_size ?? 4, schema: this.schema })
    this.emitter.setMaxListeners(0)
    // The schema is made (or migrated) before the first query; a server not reached yet is tried again by the next one.
    migrated(this.pool, this.schema).catch(() => {})
  }

  /** The schema at its last migration (once per pool; again after a failure). */
  private async ready(): Promise<void> {
    await migrated(this.pool, this.schema)
  }

  async append(stream: string, events: readonly NewEvent[], options: { expected_revision: ExpectedRevision }): Promise<AppendResult> {
    this.assertOpen()
    const stored = events.map(e => ({ id: e.id ?? randomUUID(), type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata) }))
    return await new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ stream, events: stored, expected: options.expected_revision, resolve, reject })
      this.scheduleCommit()
    })
  }

  /** Commits the queued appends after the current group, once per turn of the event loop. */
  private scheduleCommit(): void {
    if (this.scheduled) return
    this.scheduled = true
    this.running = this.running
      .then(async () => {
        this.scheduled = false
        const group = this.queue
        this.queue = []
        if (group.length > 0) await this.commit(group)
      })
      .catch(() => {})
  }

  /**
   * One transaction for `group`, in four round trips: the lock and the head; every stream's
   * last revision at once; one insert of every accepted append's events; the commit. Each
   * append is checked in this process under the lock (a refused one takes no position); when
   * the insert fails (an event id already stored), the group is tried again one append at a
   * time, each in a savepoint, so that only the faulty append fails. Each append's promise
   * settles after the commit (or the rollback).
   */
  private async commit(group: PendingAppend[]): Promise<void> {
    let outcomes: Array<AppendResult | Error>
    let client: pg.PoolClient | null = null
    try {
      await this.ready()
      client = await this.pool.connect()
      const [, , headRow] = (await client.query(
        `BEGIN; SELECT pg_advisory_xact_lock(${APPEND_LOCK}); SELECT coalesce(max(position), 0) AS p FROM events`
      )) as unknown as pg.QueryResult<{ p: string }>[]
      const head = Number(headRow.rows[0].p)
      try {
        await client.query('SAVEPOINT group_insert')
        outcomes = await this.insertGroup(client, group, head)
        await client.query('RELEASE SAVEPOINT group_insert')
      } catch {
        await client.query('ROLLBACK TO SAVEPOINT group_insert')
        outcomes = []
        let at = head
        for (const a of group) {
          await client.query('SAVEPOINT one_append')
          try {
            const [o] = await this.insertGroup(client, [a], at)
            if (o instanceof Error) throw o
            at = o.position
            outcomes.push(o)
            await client.query('RELEASE SAVEPOINT one_append')
          } catch (err) {
            await client.query('ROLLBACK TO SAVEPOINT one_append')
            outcomes.push(err instanceof Error ? err : new Error(String(err)))
          }
        }
      }
      // Delivered to every LISTENing process at the commit, not before (and not on a rollback).
      await client.query(this.notify && outcomes.some(o => !(o instanceof Error)) ? `NOTIFY ${this.channel}; COMMIT` : 'COMMIT')
    } catch (err) {
      await client?.query('ROLLBACK').catch(() => {})
      for (const a of group) a.reject(err)
      return
    } finally {
      client?.release()
    }
    group.forEach((a, i) => {
      const o = outcomes[i]
      if (o instanceof Error) a.reject(o)
      else a.resolve(o)
    })
    this.emitter.emit('appended')
  }

  /**
   * Checks each append of `group` against its stream's last revision (one query for all, and
   * the appends before it in the group) and inserts the accepted ones' events after `head`
   * in one statement. @returns each append's result, or its WrongExpectedRevisionError.
   * @throws what the insert raised (the caller retries append by append).
   */
  private async insertGroup(client: pg.PoolClient, group: PendingAppend[], head: number): Promise<Array<AppendResult | Error>> {
    const streams = [...new Set(group.map(a => a.stream))]
    const last = new Map<string, number>()
    for (const r of (
      await client.query<{ stream: string; r: number }>('SELECT stream, max(revision) AS r FROM events WHERE stream = ANY($1) GROUP BY stream', [streams])
    ).rows)
      last.set(r.stream, r.r)
    const outcomes: Array<AppendResult | Error> = []
    const records: unknown[][] = []
    let position = head
    for (const a of group) {
      const actual = last.get(a.stream) ?? -1
      const e = a.expected
      if ((e === 'no_stream' && actual !== -1) || (e === 'stream_exists' && actual === -1) || (typeof e === 'number' && e !== actual)) {
        outcomes.push(new WrongExpectedRevisionError(a.stream, e, actual))
        continue
      }
      a.events.forEach((ev, i) => {
        records.push([position + i + 1, ev.id, a.stream, actual + i + 1, ev.type, ev.data, ev.metadata])
      })
      position += a.events.length
      last.set(a.stream, actual + a.events.length)
      outcomes.push({ next_expected_revision: actual + a.events.length, position })
    }
    // PostgreSQL takes at most 65,535 parameters a statement: 9,000 events of 7 at a time.
    for (let from = 0; from < records.length; from += 9_000) {
      const chunk = records.slice(from, from + 9_000)
      const rows = chunk.map((_, r) => `(${Array.from({ length: 7 }, (_, c) => `$${r * 7 + c + 1}`).join(', ')})`)
      await client.query(`INSERT INTO events (${COLUMNS}) VALUES ${rows.join(', ')}`, chunk.flat())
    }
    return outcomes
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.assertOpen()
    await this.ready()
    const limit = options?.max_count ?? null
    const rows =
      options?.direction === 'backwards'
        ? await this.pool.query<Row>(`SELECT ${COLUMNS} FROM events WHERE stream = $1 AND revision <= $2 ORDER BY revision DESC LIMIT $3`, [
            stream,
            options.from_revision ?? 2_147_483_647,
            limit
          ])
        : await this.pool.query<Row>(`SELECT ${COLUMNS} FROM events WHERE stream = $1 AND revision >= $2 ORDER BY revision LIMIT $3`, [
            stream,
            options?.from_revision ?? 0,
            limit
          ])
    return rows.rows.map(toRecorded)
  }

  async readAll(options: { from_position: number; max_count: number; max_bytes?: number }): Promise<RecordedEvent[]> {
    this.assertOpen()
    return await this.page(options.from_position, options.max_count, options.max_bytes ?? Number.MAX_SAFE_INTEGER)
  }

  /**
   * Events after `from` in global order: at most `maxCount`, and no more once the data of
   * those taken reaches `maxBytes` characters (one event at least), the sum computed by the
   * server over the primary key's range, which stops at the page's end.
   */
  private async page(from: number, maxCount: number, maxBytes: number): Promise<RecordedEvent[]> {
    await this.ready()
    const r = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM (
         SELECT ${COLUMNS}, sum(length(data)) OVER (ORDER BY position) - length(data) AS before
         FROM events WHERE position > $1 ORDER BY position LIMIT $2
       ) page WHERE before < $3 ORDER BY position`,
      [from, maxCount, Math.max(1, Math.min(maxBytes, Number.MAX_SAFE_INTEGER))]
    )
    return r.rows.map(toRecorded)
  }

  /** Positions are one per event with no gap: the head minus `position`, at most `cap`. */
  async countAfter(position: number, cap: number): Promise<number> {
    return Math.min(cap, Math.max(0, (await this.headPosition()) - position))
  }

  async headPosition(): Promise<number> {
    this.assertOpen()
    return await this.head()
  }

  private async head(): Promise<number> {
    await this.ready()
    return Number((await this.pool.query<{ p: string }>('SELECT coalesce(max(position), 0) AS p FROM events')).rows[0].p)
  }

  /** Stored checkpoint of a named consumer (0 when none). */
  async getCheckpoint(name: string): Promise<number> {
    await this.ready()
    const r = await this.pool.query<{ position: string }>('SELECT position FROM checkpoints WHERE name = $1', [name])
    return r.rows.length > 0 ? Number(r.rows[0].position) : 0
  }

  async setCheckpoint(name: string, position: number): Promise<void> {
    if (this.closed) return
    await this.ready()
    await this.pool.query('INSERT INTO checkpoints (name, position) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET position = excluded.position', [
      name,
      position
    ])
  }

  subscribeToAll(options: SubscribeOptions, handler: (event: RecordedEvent) => Promise<void> | void, onError?: (err: unknown) => void): Subscription {
    this.startPolling()
    const log = {
      page: (from: number, n: number, bytes: number) => this.page(from, n, bytes),
      head: () => this.head(),
      closed: () => this.closed,
      appended: this.emitter
    }
    return followLog(log, this.batchSize, options, handler, onError)
  }

  /**
   * Wakes subscribers when another process appends: at once through LISTEN (a connection of
   * its own, outside the pool, opened again a second after it fails), and by reading the head
   * every `poll_interval_ms` while that connection is not open (every second while it is).
   */
  private startPolling(): void {
    if (this.notify && this.listener === null)
      // A notification (or a new connection, which may have missed some) wakes the subscribers.
      this.listener = new Listener(this.pool.options, this.channel, () => this.emitter.emit('appended'))
    if (this.poller || this.pollMs <= 0) return
    let last = -1
    let reading = false
    let readAt = 0
    this.poller = setInterval(() => {
      if (this.closed || reading) return
      if (this.listener?.listening === true && Date.now() - readAt < LISTENING_POLL_MS) return
      reading = true
      readAt = Date.now()
      this.head()
        .then(h => {
          if (h !== last) {
            last = h
            this.emitter.emit('appended')
          }
        })
        .catch(() => {})
        .finally(() => {
          reading = false
        })
    }, this.pollMs)
    this.poller.unref()
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event store is closed')
  }

  async close(): Promise<void> {
    if (this.closed) return
    // Appends already asked for commit before the pool closes.
    await this.running
    this.closed = true
    this.listener?.stop()
    if (this.poller) clearInterval(this.poller)
    this.emitter.emit('appended')
    if (this.owns) await this.pool.end()
  }
}
