import { MongoClient, MongoServerError, type Db, type Filter, type Document } from 'mongodb'
import type { Collection, Doc, FindOptions, ReadStore } from './port.ts'

/** Indexes for every query the API and workers make (created at start, idempotently). */
export const INDEXES: Readonly<Record<string, Array<Record<string, 1 | -1>>>> = {
  api_keys: [{ key_hash: 1 }, { user_uuid: 1, created_at: -1 }],
  jobs: [{ user_uuid: 1, created_at: -1 }, { status: 1 }],
  users: [],
  wallets: [],
  wallet_transactions: [{ user_uuid: 1, occurred_at: -1 }]
}

const isDuplicateKey = (err: unknown): boolean => err instanceof MongoServerError && err.code === 11000

function toFilter (filter: Record<string, unknown>): Filter<Document> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(filter)) if (v !== undefined) out[k] = Array.isArray(v) ? { $in: v } : v
  return out as Filter<Document>
}

class MongoCollection<T extends Doc> implements Collection<T> {
  private readonly c: ReturnType<Db['collection']>
  constructor (db: Db, name: string) { this.c = db.collection(name) }

  async get (id: string): Promise<T | null> {
    return await this.c.findOne({ _id: id as unknown as Document['_id'] }) as T | null
  }

  /**
   * Idempotent write: a document carrying `revision` (single-stream read model) or
   * `position` (multi-stream) replaces the stored one only when it is newer; an older or
   * equal one is a no-op (the upsert's duplicate key on `_id` means "already applied").
   * Documents without either are inserted by id (ledgers: a duplicate means applied).
   */
  async put (doc: T): Promise<void> {
    const guard = typeof doc.revision === 'number' ? 'revision' : typeof doc.position === 'number' ? 'position' : null
    try {
      if (guard === null) {
        await this.c.replaceOne({ _id: doc._id as unknown as Document['_id'] }, doc, { upsert: true })
        return
      }
      await this.c.replaceOne({ _id: doc._id as unknown as Document['_id'], $or: [{ [guard]: { $lt: doc[guard] } }, { [guard]: { $exists: false } }] }, doc, { upsert: true })
    } catch (err) {
      if (!isDuplicateKey(err)) throw err
    }
  }

  async delete (id: string): Promise<void> {
    await this.c.deleteOne({ _id: id as unknown as Document['_id'] })
  }

  async find (filter: Record<string, unknown>, options: FindOptions = {}): Promise<{ items: T[], total: number }> {
    const f = toFilter(filter)
    const sort = Object.entries(options.sort ?? {})
    const last = sort.length > 0 ? sort[sort.length - 1][1] : 1
    const cursor = this.c.find(f, { sort: [...sort, ['_id', last]] as Array<[string, 1 | -1]>, skip: options.offset ?? 0, ...(options.limit !== undefined ? { limit: options.limit } : {}) })
    const [items, total] = await Promise.all([cursor.toArray(), this.c.countDocuments(f)])
    return { items: items as unknown as T[], total }
  }

  async findOne (filter: Record<string, unknown>): Promise<T | null> {
    return await this.c.findOne(toFilter(filter)) as T | null
  }
}

/**
 * Read models in MongoDB (`MONGODB_URL`) with the official driver. Durable: projections
 * resume from their stored checkpoints instead of rebuilding at start. Checkpoints are
 * compare-and-set (a checkpoint never moves back). Not run against a live server in this
 * repository's CI (none can be installed there); it passes the read store contract suite
 * wherever `MONGODB_URL` is set.
 */
export class MongoReadStore implements ReadStore {
  readonly durable = true
  private readonly client: MongoClient
  private readonly db: Db

  private constructor (client: MongoClient, db: Db) {
    this.client = client
    this.db = db
  }

  /** Connects and creates the indexes. `prefix` namespaces the collections (tests, blue/green). */
  static async connect (url: string, options: { database?: string } = {}): Promise<MongoReadStore> {
    const client = await new MongoClient(url).connect()
    const store = new MongoReadStore(client, client.db(options.database))
    for (const [name, indexes] of Object.entries(INDEXES)) {
      for (const index of indexes) await store.db.collection(name).createIndex(index)
    }
    return store
  }

  collection<T extends Doc> (name: string): Collection<T> {
    return new MongoCollection<T>(this.db, name)
  }

  async getCheckpoint (projection: string): Promise<number> {
    const row = await this.db.collection('checkpoints').findOne({ _id: projection as unknown as Document['_id'] })
    return typeof row?.position === 'number' ? row.position : 0
  }

  async setCheckpoint (projection: string, position: number): Promise<void> {
    try {
      await this.db.collection('checkpoints').updateOne({ _id: projection as unknown as Document['_id'], position: { $lt: position } }, { $set: { position } }, { upsert: true })
    } catch (err) {
      if (!isDuplicateKey(err)) throw err
    }
  }

  /** Drops the database (tests). */
  async drop (): Promise<void> { await this.db.dropDatabase() }

  async close (): Promise<void> { await this.client.close() }
}
