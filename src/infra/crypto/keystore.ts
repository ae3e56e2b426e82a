import { DatabaseSync } from 'node:sqlite'
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/**
 * Per-account data keys for personal data in events (ARCHITECTURE.md: crypto-shredding).
 * Each key is 32 random bytes, stored wrapped (AES-256-GCM) under the master key.
 * `destroy` deletes the key; everything sealed with it becomes unreadable.
 */
export interface DataKeyStore {
  /** The owner's key, created on first use. @throws when the key was destroyed. */
  getOrCreate (owner: string): Promise<Buffer>
  /** The owner's key, or null when it never existed or was destroyed. */
  get (owner: string): Promise<Buffer | null>
  destroy (owner: string): Promise<void>
  close (): Promise<void>
}

export class DataKeyDestroyedError extends Error {
  constructor (owner: string) { super(`data key of ${owner} was destroyed`); this.name = 'DataKeyDestroyedError' }
}

function wrap (kek: Buffer, key: Buffer, owner: string): Buffer {
  const iv = randomBytes(12)
  const c = createCipheriv('aes-256-gcm', kek, iv)
  c.setAAD(Buffer.from(owner))
  return Buffer.concat([iv, c.update(key), c.final(), c.getAuthTag()])
}

function unwrap (kek: Buffer, blob: Buffer, owner: string): Buffer {
  const d = createDecipheriv('aes-256-gcm', kek, blob.subarray(0, 12))
  d.setAAD(Buffer.from(owner))
  d.setAuthTag(blob.subarray(blob.length - 16))
  return Buffer.concat([d.update(blob.subarray(12, blob.length - 16)), d.final()])
}

/** How long a process trusts a data key it read (ms): a key destroyed by another process stops working here within this. */
export const KEY_CACHE_TTL_MS = 30_000
/** Data keys kept in memory at most (the least recently read go first). */
const KEY_CACHE_MAX = 10_000

/**
 * SQLite key store in its own file (`DATA_DIR/keys.db`), apart from the events, with
 * `secure_delete` so a destroyed key leaves no bytes behind in free pages, and a
 * destruction checkpoints and truncates the write-ahead log, where the key's page would
 * otherwise survive. Destroyed owners keep a tombstone row so a key is never re-created
 * for them. Keys read are cached for KEY_CACHE_TTL_MS: a destruction in another process
 * reaches this one within it.
 */
export class SqliteDataKeyStore implements DataKeyStore {
  private readonly db: DatabaseSync
  private readonly kek: Buffer
  private readonly cache = new Map<string, { key: Buffer, until: number }>()

  constructor (file: string, masterKey: Buffer) {
    this.kek = masterKey
    this.db = new DatabaseSync(file, { timeout: 10_000 })
    this.db.exec(`PRAGMA journal_mode = WAL; PRAGMA secure_delete = ON;
      CREATE TABLE IF NOT EXISTS data_keys (owner TEXT PRIMARY KEY, wrapped BLOB, destroyed_at TEXT)`)
  }

  async getOrCreate (owner: string): Promise<Buffer> {
    const existing = await this.get(owner)
    if (existing) return existing
    this.db.prepare('INSERT OR IGNORE INTO data_keys (owner, wrapped) VALUES (?, ?)').run(owner, wrap(this.kek, randomBytes(32), owner))
    const key = await this.get(owner)
    if (!key) throw new DataKeyDestroyedError(owner)
    return key
  }

  async get (owner: string): Promise<Buffer | null> {
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

  async destroy (owner: string): Promise<void> {
    this.cache.delete(owner)
    this.db.prepare(`INSERT INTO data_keys (owner, wrapped, destroyed_at) VALUES (?, NULL, ?)
      ON CONFLICT(owner) DO UPDATE SET wrapped = NULL, destroyed_at = excluded.destroyed_at`).run(owner, new Date().toISOString())
    // The page that held the key lives on in the WAL until a checkpoint: copy it back (where
    // secure_delete has zeroed the old cell) and truncate the log. A reader in another
    // process can hold it back for a moment: retried, then left to the next destruction.
    for (let attempt = 0; attempt < 50; attempt++) {
      const r = this.db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number }
      if (Number(r.busy) === 0) return
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  }

  async close (): Promise<void> { this.db.close() }
}
