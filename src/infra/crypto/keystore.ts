import { DatabaseSync } from 'node:sqlite'
import { preparePrivateDatabase } from '../private-files.ts'
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { statSync } from 'node:fs'
import { DataKeyDestroyedError, type DataKeyStore } from '../../ports/data-keys.ts'
import { forgetWal, truncateWal } from '../sqlite-checkpointer.ts'

function wrap(kek: Buffer, key: Buffer, owner: string): Buffer {
  const iv = randomBytes(12)
  const c = createCipheriv('aes-256-gcm', kek, iv)
  c.setAAD(Buffer.from(owner))
  return Buffer.concat([iv, c.update(key), c.final(), c.getAuthTag()])
}

function unwrap(kek: Buffer, blob: Buffer, owner: string): Buffer {
  const d = createDecipheriv('aes-256-gcm', kek, blob.subarray(0, 12))
  d.setAAD(Buffer.from(owner))
  d.setAuthTag(blob.subarray(blob.length - 16))
  return Buffer.concat([d.update(blob.subarray(12, blob.length - 16)), d.final()])
}

/** How long a process trusts a data key it read (ms): a key destroyed by another process stops working here within this. */
const KEY_CACHE_TTL_MS = 30_000
/** Data keys kept in memory at most (the least recently read go first). */
const KEY_CACHE_MAX = 10_000
/** How long a destruction waits for the WAL to be emptied before it returns (ms); the scrub goes on after. */
const SCRUB_WAIT_MS = 2_000
/** Pauses between attempts at emptying the WAL (ms): the first, doubling up to the last. */
const SCRUB_PAUSE_MS = { first: 50, max: 5_000 }
/** A scrub that has not finished after this long is reported (ms). */
const SCRUB_REPORT_AFTER_MS = 10_000

/** What the erasure of data keys is doing: keys destroyed whose bytes may still be in the WAL, and since when (ms since the epoch). */
export interface ErasureStatus {
  pending: number
  pending_since: number | null
  stalled_reports: number
}

/** Told when a scrub of destroyed keys is late (`stalled`: a reader holds the WAL past SCRUB_REPORT_AFTER_MS), finishes after such a report (`scrubbed`), or fails (`error`). */
export type ErasureReport = (e: { type: 'stalled' | 'scrubbed' | 'error'; pending: number; waited_ms: number; error?: string }) => void

/**
 * SQLite key store in its own file (`DATA_DIR/keys.db`), apart from the events, with
 * `secure_delete` so a destroyed key leaves no bytes behind in free pages. A destruction
 * nulls the key's row at once (it stops working in this process at once, in others within
 * KEY_CACHE_TTL_MS), then empties the write-ahead log, where the key's old page would
 * otherwise survive: `wal_checkpoint(TRUNCATE)` in the process's checkpointer thread,
 * never on the event loop, retried while a reader in any process holds the WAL (with
 * growing pauses), reported when late (`onErasure`: a log line and a metric), and tried
 * again at the next start should the process stop first. Destroyed owners keep a
 * tombstone row so a key is never re-created for them.
 */
export class SqliteDataKeyStore implements DataKeyStore {
  private readonly db: DatabaseSync
  private readonly file: string
  private readonly kek: Buffer
  private readonly cache = new Map<string, { key: Buffer; until: number }>()
  /** Destructions not yet scrubbed from the WAL: the generation of the latest, and when the oldest was made. */
  private destroyed = 0
  private scrubbedUpTo = 0
  private pendingSince: number | null = null
  private stalledReports = 0
  private scrubbing: Promise<void> | null = null
  private closed = false
  private wake: (() => void) | null = null
  private report: ErasureReport = () => {}

  constructor(file: string, masterKey: Buffer) {
    this.kek = masterKey
    this.file = file
    preparePrivateDatabase(file)
    this.db = new DatabaseSync(file, { timeout: 10_000 })
    this.db.exec(`PRAGMA journal_mode = WAL; PRAGMA secure_delete = ON;
      CREATE TABLE IF NOT EXISTS data_keys (owner TEXT PRIMARY KEY, wrapped BLOB, destroyed_at TEXT)`)
    // A WAL left by an earlier process may hold a destroyed key's page (its scrub could not finish): emptied now.
    if ((statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) this.markDestroyed()
  }

  /** Where late or failed scrubs are reported (the service logs them and counts them in `/metrics`). */
  onErasure(report: ErasureReport): void {
    this.report = report
  }

  /** Destructions whose bytes may still be in the WAL (a gauge of `/metrics`). */
  erasureStatus(): ErasureStatus {
    return { pending: this.destroyed - this.scrubbedUpTo, pending_since: this.pendingSince, stalled_reports: this.stalledReports }
  }

  async getOrCreate(owner: string): Promise<Buffer> {
    const existing = await this.get(owner)
    if (existing) return existing
    this.db.prepare('INSERT OR IGNORE INTO data_keys (owner, wrapped) VALUES (?, ?)').run(owner, wrap(this.kek, randomBytes(32), owner))
    const key = await this.get(owner)
    if (!key) throw new DataKeyDestroyedError(owner)
    return key
  }

  async get(owner: string): Promise<Buffer | null> {
    const hit = this.cache.get(owner)
    const now = Date.now()
    if (hit && hit.until > now) return hit.key
    this.cache.delete(owner)
    const row = this.db.prepare('SELECT wrapped FROM data_keys WHERE owner = ?').get(owner) as { wrapped: Uint8Array | null } | undefined
    if (!row?.wrapped) return null
    const key = unwrap(this.kek, Buffer.from(row.wrapped), owner)
    this.cache.set(owner, { key, until: now + KEY_CACHE_TTL_MS })
    if (this.cache.size > KEY_CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string)
    return key
  }

  /**
   * Destroys the owner's key: its row is nulled at once; the WAL that still holds the old
   * page is emptied off the event loop. Waits at most SCRUB_WAIT_MS for that (the scrub
   * goes on in the background while a reader holds the WAL, and is reported when late).
   * A key destroyed already changes nothing (its first destruction and `destroyed_at` stand).
   */
  async destroy(owner: string): Promise<void> {
    this.cache.delete(owner)
    const r = this.db
      .prepare(`INSERT INTO data_keys (owner, wrapped, destroyed_at) VALUES (?, NULL, ?)
      ON CONFLICT(owner) DO UPDATE SET wrapped = NULL, destroyed_at = excluded.destroyed_at WHERE data_keys.wrapped IS NOT NULL`)
      .run(owner, new Date().toISOString())
    // Destroyed before (an erasure's reaction run twice, inline and from the bus): nothing new to scrub.
    if (Number(r.changes) === 0) return
    const generation = this.markDestroyed()
    const deadline = Date.now() + SCRUB_WAIT_MS
    while (this.scrubbedUpTo < generation && Date.now() < deadline && !this.closed) {
      await new Promise<void>(resolve => setTimeout(resolve, 20))
    }
  }

  /** Counts a destruction to scrub and starts the scrub loop if it is not running. @returns its generation. */
  private markDestroyed(): number {
    this.destroyed++
    this.pendingSince ??= Date.now()
    this.wake?.()
    this.scrubbing ??= this.scrubLoop().finally(() => {
      this.scrubbing = null
    })
    return this.destroyed
  }

  /** Empties the WAL until every destruction so far is scrubbed; one attempt at a time, pauses growing while busy. */
  private async scrubLoop(): Promise<void> {
    let pause = SCRUB_PAUSE_MS.first
    let reported = false
    while (!this.closed && this.scrubbedUpTo < this.destroyed) {
      const generation = this.destroyed
      const outcome = await truncateWal(this.file)
      const waited = Date.now() - (this.pendingSince ?? Date.now())
      if (outcome === 'done') {
        this.scrubbedUpTo = generation
        if (this.scrubbedUpTo === this.destroyed) this.pendingSince = null
        if (reported) this.report({ type: 'scrubbed', pending: this.destroyed - this.scrubbedUpTo, waited_ms: waited })
        reported = false
        pause = SCRUB_PAUSE_MS.first
        continue
      }
      if (outcome === 'error')
        this.report({ type: 'error', pending: this.destroyed - this.scrubbedUpTo, waited_ms: waited, error: 'wal_checkpoint(TRUNCATE) failed on keys.db' })
      else if (!reported && waited >= SCRUB_REPORT_AFTER_MS) {
        reported = true
        this.stalledReports++
        this.report({ type: 'stalled', pending: this.destroyed - this.scrubbedUpTo, waited_ms: waited })
      }
      await new Promise<void>(resolve => {
        const t = setTimeout(() => {
          this.wake = null
          resolve()
        }, pause)
        t.unref()
        this.wake = () => {
          clearTimeout(t)
          this.wake = null
          resolve()
        }
      })
      pause = Math.min(pause * 2, SCRUB_PAUSE_MS.max)
    }
  }

  async close(): Promise<void> {
    this.closed = true
    this.wake?.()
    await this.scrubbing
    forgetWal(this.file)
    this.db.close()
  }
}
