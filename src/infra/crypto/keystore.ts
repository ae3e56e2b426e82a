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

/**
 * SQLite key store in its own file (`DATA_DIR/keys.db`), apart from the events, with
 * `secure_delete` so a destroyed key leaves no bytes behind in free pages.
 * Destroyed owners keep a tombstone row so a key is never re-created for them.
 */
export class SqliteDataKeyStore implements DataKeyStore {
  private readonly db: DatabaseSync
  private readonly kek: Buffer
  private readonly cache = new Map<string, Buffer>()

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
    if (hit) return hit
    const row = this.db.prepare('SELECT wrapped FROM data_keys WHERE owner = ?').get(owner) as { wrapped: Uint8Array | null } | undefined
    if (!row?.wrapped) return null
    const key = unwrap(this.kek, Buffer.from(row.wrapped), owner)
    this.cache.set(owner, key)
    return key
  }

  async destroy (owner: string): Promise<void> {
    this.cache.delete(owner)
    this.db.prepare(`INSERT INTO data_keys (owner, wrapped, destroyed_at) VALUES (?, NULL, ?)
      ON CONFLICT(owner) DO UPDATE SET wrapped = NULL, destroyed_at = excluded.destroyed_at`).run(owner, new Date().toISOString())
  }

  async close (): Promise<void> { this.db.close() }
}
