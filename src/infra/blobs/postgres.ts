import { randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { StorePool } from '../postgres/pool.ts'
import { migrated } from '../postgres/schema.ts'
import { checkBlobName, type BlobStore } from '../../ports/blob-store.ts'

/** Bytes of one stored chunk: an upload holds one in memory, a download reads one at a time. */
const CHUNK_BYTES = 256 * 1024

/**
 * Customers' kept files on PostgreSQL: a blob is a version of CHUNK_BYTES chunks (`bytea`),
 * named by its (owner, id) row. A put writes its chunks and switches the row to them in one
 * transaction, so a failed or aborted stream leaves nothing and the old version whole; a read
 * streams the version's chunks one at a time. Memory: one chunk.
 */
export class PostgresBlobStore implements BlobStore {
  private readonly pool: StorePool
  private readonly owns: boolean
  private readonly schema: string

  constructor(url: string, options: { schema?: string; pool_size?: number; pool?: StorePool } = {}) {
    this.schema = options.schema ?? 'public'
    this.owns = options.pool === undefined
    this.pool = options.pool ?? new StorePool(url, { max: options.pool_size ?? 4, schema: this.schema })
    // The schema is made (or migrated) before the first query; a server not reached yet is tried again by the next one.
    migrated(this.pool, this.schema).catch(() => {})
  }

  /** The schema at its last migration (once per pool; again after a failure). */
  private async ready(): Promise<void> {
    await migrated(this.pool, this.schema)
  }

  async put(owner: string, id: string, content: Readable): Promise<{ bytes: number }> {
    // Listened to at once: a stream that fails before the connection is ready fails this put, not the process.
    let streamError: unknown = null
    content.on('error', err => {
      streamError ??= err
    })
    checkBlobName(owner, id)
    await this.ready()
    const version = randomUUID()
    const c = await this.pool.connect()
    let bytes = 0
    try {
      await c.query('BEGIN')
      let seq = 0
      let pending: Buffer[] = []
      let held = 0
      const flush = async (): Promise<void> => {
        if (held === 0) return
        await c.query('INSERT INTO blob_chunks (version, seq, data) VALUES ($1, $2, $3)', [version, seq++, Buffer.concat(pending)])
        pending = []
        held = 0
      }
      for await (const piece of content) {
        const b = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as string)
        bytes += b.length
        for (let at = 0; at < b.length; ) {
          const take = b.subarray(at, at + (CHUNK_BYTES - held))
          pending.push(take)
          held += take.length
          at += take.length
          if (held === CHUNK_BYTES) await flush()
        }
      }
      if (streamError !== null) throw streamError
      await flush()
      const old = await c.query<{ version: string }>('SELECT version FROM blobs WHERE owner = $1 AND id = $2 FOR UPDATE', [owner, id])
      await c.query(
        'INSERT INTO blobs (owner, id, version, bytes) VALUES ($1, $2, $3, $4) ON CONFLICT (owner, id) DO UPDATE SET version = excluded.version, bytes = excluded.bytes',
        [owner, id, version, bytes]
      )
      if (old.rows.length > 0) await c.query('DELETE FROM blob_chunks WHERE version = $1', [old.rows[0].version])
      await c.query('COMMIT')
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {})
      throw err
    } finally {
      c.release()
    }
    return { bytes }
  }

  async open(owner: string, id: string): Promise<Readable | null> {
    checkBlobName(owner, id)
    await this.ready()
    const row = (await this.pool.query<{ version: string }>('SELECT version FROM blobs WHERE owner = $1 AND id = $2', [owner, id])).rows[0]
    if (!row) return null
    const pool = this.pool
    return Readable.from(
      (async function* () {
        for (let seq = 0; ; seq++) {
          const chunk = (await pool.query<{ data: Buffer }>('SELECT data FROM blob_chunks WHERE version = $1 AND seq = $2', [row.version, seq])).rows[0]
          if (!chunk) return
          yield chunk.data
        }
      })()
    )
  }

  async delete(owner: string, id: string): Promise<void> {
    checkBlobName(owner, id)
    await this.ready()
    await this.pool.query(
      'WITH gone AS (DELETE FROM blobs WHERE owner = $1 AND id = $2 RETURNING version) DELETE FROM blob_chunks WHERE version IN (SELECT version FROM gone)',
      [owner, id]
    )
  }

  async deleteOwner(owner: string): Promise<number> {
    checkBlobName(owner, 'x')
    await this.ready()
    const r = await this.pool.query<{ n: string }>(
      'WITH gone AS (DELETE FROM blobs WHERE owner = $1 RETURNING version), chunks AS (DELETE FROM blob_chunks WHERE version IN (SELECT version FROM gone)) SELECT count(*) AS n FROM gone',
      [owner]
    )
    return Number(r.rows[0].n)
  }

  async close(): Promise<void> {
    if (this.owns) await this.pool.end()
  }
}
