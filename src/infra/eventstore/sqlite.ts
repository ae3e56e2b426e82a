import { DatabaseSync } from 'node:sqlite'
import { preparePrivateDatabase } from '../private-files.ts'
import { EventEmitter } from 'node:events'
import { WalCheckpointer } from '../sqlite-checkpointer.ts'
import { beginImmediate, WRITE_LOCK_WAIT_MS } from '../sqlite-transaction.ts'
import { randomUUID } from 'node:crypto'
import { turnIfDue } from '../../lib/turns.ts'
import type { HeldDeliveries, HeldDelivery } from '../../ports/held-deliveries.ts'
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
import { SCHEMA, prepareStatements, toRecorded, type Row, type Statements } from './sqlite-sql.ts'
import { followLog } from './follow.ts'
import type { PendingAppend } from './pending-append.ts'

export interface SqliteEventStoreOptions {
  /** How often (ms) to look for appends made by other processes on the same file. */
  poll_interval_ms?: number
  /** Events read per batch by subscriptions. */
  batch_size?: number
  /** How often (ms) a worker thread checkpoints the WAL (0: SQLite's automatic checkpoints, in the committing call). */
  checkpoint_interval_ms?: number
}

/**
 * Embedded event store on one SQLite file (`node:sqlite`, WAL). The appends of one turn
 * of the event loop commit together in a `BEGIN IMMEDIATE` transaction (see `append`), so
 * concurrent writers (other connections or other processes on the same file) are
 * serialised and the expected-revision check is exact.
 * The WAL is checkpointed by a worker thread (`../sqlite-checkpointer.ts`), not inside commits.
 * Live subscriptions wake on appends in this process at once and on appends by other
 * processes within `poll_interval_ms` (via `PRAGMA data_version`).
 */
export class SqliteEventStore implements EventStore, HeldDeliveries {
  readonly file: string
  private readonly db: DatabaseSync
  private readonly emitter = new EventEmitter()
  private readonly pollMs: number
  private readonly batchSize: number
  private closed = false
  private readonly st: Statements
  private poller: NodeJS.Timeout | null = null
  private lastDataVersion = -1
  private readonly checkpointer: WalCheckpointer | null = null

  constructor(file: string, options: SqliteEventStoreOptions = {}) {
    this.file = file
    this.pollMs = options.poll_interval_ms ?? 100
    this.batchSize = options.batch_size ?? 500
    preparePrivateDatabase(file)
    this.db = new DatabaseSync(file, { timeout: 10_000 })
    // A 16 MiB page cache (SQLite's default is 2 MiB): the indexes of a store of millions of events stay warm.
    // synchronous = FULL: each commit syncs the WAL before it returns, so an append that was
    // answered (a 202, a 204) survives a power cut or an OS crash, not only the process's death.
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON; PRAGMA cache_size = -16384;')
    this.db.exec(SCHEMA)
    const interval = options.checkpoint_interval_ms ?? 500
    if (interval > 0) {
      this.db.exec('PRAGMA wal_autocheckpoint = 0')
      this.checkpointer = new WalCheckpointer(file, interval)
    }
    this.emitter.setMaxListeners(0)
    this.st = prepareStatements(this.db)
  }

  /**
   * Appends `events` to `stream` if its revision is `expected_revision`. Appends made in
   * the same turn of the event loop (to any streams) commit together, in the order they
   * were asked, in one `BEGIN IMMEDIATE` transaction (group commit: a transaction writes
   * its pages to the WAL once, so 32 appends cost about a third of 32 transactions); each
   * one is checked against the stream as the appends before it in the group left it, and
   * one that fails (wrong expected revision, a duplicate event id) is undone alone (a
   * savepoint) and rejected, the others commit.
   * @throws WrongExpectedRevisionError; RangeError for no events; the store's error when
   *   the transaction cannot commit (every append of the group is rejected then).
   */
  async append(stream: string, events: readonly NewEvent[], options: { expected_revision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event')
    this.assertOpen()
    // Serialized before the group's transaction, with turns of the event loop between events
    // (a chunk of 50,000 addresses is 6 MB of JSON): the transaction only writes rows.
    const rows: Array<{ id: string; type: string; data: string; metadata: string }> = []
    for (const e of events) {
      rows.push({ id: e.id ?? randomUUID(), type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata) })
      const due = turnIfDue()
      if (due) await due
    }
    this.assertOpen()
    return await new Promise<AppendResult>((resolve, reject) => {
      this.group.push({ stream, events: rows, expected: options.expected_revision, resolve, reject })
      if (this.group.length === 1) setImmediate(() => this.scheduleCommit())
    })
  }

  /** Appends waiting for the group's commit (see `append`). */
  private group: PendingAppend[] = []

  /** Whether a group is being committed (its write lock awaited): appends made meanwhile join the next group. */
  private committing = false
  /** The commit under way (close waits for it). */
  private running: Promise<void> = Promise.resolve()

  /** Starts committing what waits, unless a commit is under way (it takes what waits when it is done). */
  private scheduleCommit(): void {
    if (!this.committing) this.running = this.commitGroup()
  }

  /**
   * Commits the waiting appends in one transaction and settles each (see `append`), then
   * the appends made meanwhile, until none waits. The write lock is awaited without
   * blocking the event loop (`beginImmediate`); a group that cannot have it within
   * WRITE_LOCK_WAIT_MS is rejected (SQLite's "database is locked").
   */
  private async commitGroup(): Promise<void> {
    if (this.committing) return
    this.committing = true
    try {
      while (this.group.length > 0) {
        if (this.closed) {
          for (const a of this.group.splice(0)) a.reject(new Error('event store is closed'))
          return
        }
        let locked: boolean
        try {
          locked = await beginImmediate(this.db)
        } catch (err) {
          for (const a of this.group.splice(0)) a.reject(err)
          continue
        }
        if (!locked) {
          const err = Object.assign(new Error(`database is locked: another writer held ${this.file} for ${WRITE_LOCK_WAIT_MS} ms`), { code: 'SQLITE_BUSY' })
          for (const a of this.group.splice(0)) a.reject(err)
          continue
        }
        if (this.closed) {
          this.db.exec('ROLLBACK')
          continue
        }
        // The lock is held: the group is what waits now, committed in this turn of the loop.
        const group = this.group.splice(0)
        const outcomes: Array<AppendResult | Error> = []
        try {
          for (const a of group) outcomes.push(this.appendOne(a))
          this.db.exec('COMMIT')
        } catch (err) {
          if (this.db.isTransaction) this.db.exec('ROLLBACK')
          for (const a of group) a.reject(err)
          continue
        }
        let head = 0
        group.forEach((a, i) => {
          const o = outcomes[i]
          if (o instanceof Error) a.reject(o)
          else {
            head = Math.max(head, o.position)
            a.resolve(o)
          }
        })
        if (head > 0) this.emitter.emit('appended', head)
      }
    } finally {
      this.committing = false
    }
  }

  /** One append inside the group's transaction, under a savepoint: its result, or its error (its rows undone). */
  private appendOne(a: PendingAppend): AppendResult | Error {
    this.db.exec('SAVEPOINT append')
    try {
      const actual = Number((this.st.streamRev.get(a.stream) as { r: number }).r)
      const expected = a.expected
      const ok =
        expected === 'any' ||
        (expected === 'no_stream' && actual === -1) ||
        (expected === 'stream_exists' && actual >= 0) ||
        (typeof expected === 'number' && expected === actual)
      if (!ok) throw new WrongExpectedRevisionError(a.stream, expected, actual)
      let revision = actual
      let position = 0
      for (const e of a.events) {
        revision += 1
        const r = this.st.insert.run(e.id, a.stream, revision, e.type, e.data, e.metadata)
        position = Number(r.lastInsertRowid)
      }
      this.db.exec('RELEASE append')
      return { next_expected_revision: revision, position }
    } catch (err) {
      this.db.exec('ROLLBACK TO append')
      this.db.exec('RELEASE append')
      if (err instanceof Error) return err
      return new Error(String(err))
    }
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.assertOpen()
    if (!options) return (this.st.readStream.all(stream) as unknown as Row[]).map(toRecorded)
    const limit = options.max_count ?? -1
    const rows =
      options.direction === 'backwards'
        ? this.st.readBackwards.all(stream, options.from_revision ?? Number.MAX_SAFE_INTEGER, limit)
        : this.st.readForwards.all(stream, options.from_revision ?? 0, limit)
    return (rows as unknown as Row[]).map(toRecorded)
  }

  async readAll(options: { from_position: number; max_count: number; max_bytes?: number }): Promise<RecordedEvent[]> {
    this.assertOpen()
    return this.page(options.from_position, options.max_count, options.max_bytes ?? Number.MAX_SAFE_INTEGER)
  }

  /**
   * Events after `from` in global order: at most `maxCount`, and no more once the data of
   * those taken reaches `maxBytes` characters (one event at least). The rows are stepped
   * one at a time (the statement stops where the page does), so a page of large events
   * (batch chunks) reads no more rows than it returns. Cost: the page (primary key range).
   */
  private page(from: number, maxCount: number, maxBytes: number): RecordedEvent[] {
    const out: RecordedEvent[] = []
    let before = 0
    for (const row of this.st.readAll.iterate(from, maxCount) as IterableIterator<unknown>) {
      if (out.length > 0 && before >= maxBytes) break
      const r = row as Row
      out.push(toRecorded(r))
      before += r.data.length
    }
    return out
  }

  /** Positions are one per event with no gap: the head minus `position`, at most `cap`. */
  async countAfter(position: number, cap: number): Promise<number> {
    return Math.min(cap, Math.max(0, (await this.headPosition()) - position))
  }

  async headPosition(): Promise<number> {
    this.assertOpen()
    return this.head()
  }

  /** Position of the last event stored (0 when none): one read of the primary key's end. */
  private head(): number {
    return Number((this.st.head.get() as { p: number }).p)
  }

  /** Stored checkpoint of a named consumer (0 when none). Used by the relay. */
  async getCheckpoint(name: string): Promise<number> {
    const row = this.st.getCp.get(name) as { position: number } | undefined
    return row ? Number(row.position) : 0
  }

  async setCheckpoint(name: string, position: number): Promise<void> {
    if (this.closed) return
    this.st.setCp.run(name, position)
  }

  async holdDelivery(h: HeldDelivery): Promise<void> {
    if (this.closed) return
    this.st.hold.run(h.consumer, h.event_id, h.stream, h.revision, h.type, h.due_at, h.attempts, h.state, h.last_error)
  }

  async releaseDelivery(consumer: string, eventId: string): Promise<void> {
    if (this.closed) return
    this.st.unhold.run(consumer, eventId)
  }

  async heldDeliveries(consumer: string, state: HeldDelivery['state']): Promise<HeldDelivery[]> {
    this.assertOpen()
    return (this.st.held.all(consumer, state) as unknown as HeldDelivery[]).map(h => ({ ...h, revision: Number(h.revision), attempts: Number(h.attempts) }))
  }

  async heldSummary(): Promise<Array<{ consumer: string; state: HeldDelivery['state']; count: number; oldest_due_at: string }>> {
    this.assertOpen()
    return (this.st.heldSummary.all() as unknown as Array<{ consumer: string; state: HeldDelivery['state']; count: number; oldest_due_at: string }>).map(r => ({
      ...r,
      count: Number(r.count)
    }))
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

  /** Wakes subscribers when another process commits to the same file. */
  private startPolling(): void {
    if (this.poller || this.pollMs <= 0) return
    this.poller = setInterval(() => {
      if (this.closed) return
      const v = Number((this.st.dataVersion.get() as { data_version: number }).data_version)
      if (v !== this.lastDataVersion) {
        this.lastDataVersion = v
        this.emitter.emit('appended', -1)
      }
    }, this.pollMs)
    this.poller.unref()
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event store is closed')
  }

  async close(): Promise<void> {
    if (this.closed) return
    // Appends already asked for commit before the file closes.
    this.scheduleCommit()
    await this.running
    this.closed = true
    if (this.poller) clearInterval(this.poller)
    this.emitter.emit('appended', -1)
    await this.checkpointer?.close()
    this.db.close()
  }
}
