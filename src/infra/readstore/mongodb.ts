import { MongoClient, MongoServerError, type Db, type Filter, type Document } from 'mongodb'
import type { Collection, Doc, FindOptions, ReadStore } from './port.ts'

/** Indexes for every query the API and workers make (created at start, idempotently). */
export const INDEXES: Readonly<Record<string, Array<Record<string, 1 | -1>>>> = {
  api_keys: [{ key_hash: 1 }, { user_uuid: 1, created_at: -1 }],
  agents: [{ token_hash: 1 }, { user_uuid: 1, created_at: -1 }],
  webhooks: [{ user_uuid: 1, created_at: -1 }, { user_uuid: 1, status: 1 }],
  webhook_deliveries: [{ status: 1 }, { user_uuid: 1 }],
  webhook_attempts: [{ webhook_uuid: 1, user_uuid: 1, attempted_at: -1 }, { user_uuid: 1 }],
  jobs: [{ user_uuid: 1, created_at: -1 }, { status: 1 }],
  users: [],
  sessions: [{ user_uuid: 1, started_at: -1 }],
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
  private readonly db: Db
  private readonly name: () => string
  constructor (db: Db, name: () => string) { this.db = db; this.name = name }
  private get c (): ReturnType<Db['collection']> { return this.db.collection(this.name()) }

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
 * compare-and-set (a checkpoint never moves back).
 *
 * Blue/green rebuild: read models live in versioned collections (`jobs__v3`), and the
 * `read_model_versions` document names the active version. `svc projector --rebuild`
 * projects every event into the next version while the active one keeps serving, then
 * switches the active version (compare-and-set) once it has caught up; readers follow the
 * switch within `refresh_ms`.
 *
 * Not run against a live server in this repository's CI (none can be installed there);
 * it passes the read store contract suite wherever `MONGODB_URL` is set.
 */
export class MongoReadStore implements ReadStore {
  readonly durable = true
  private readonly client: MongoClient
  private readonly db: Db
  private version: number
  private readonly pinned: boolean
  private timer: NodeJS.Timeout | null = null

  private constructor (client: MongoClient, db: Db, version: number, pinned: boolean) {
    this.client = client
    this.db = db
    this.version = version
    this.pinned = pinned
  }

  /**
   * Connects and creates the indexes of the version in use. `version` pins a version
   * (the rebuild writes the next one); otherwise the active version is followed.
   */
  static async connect (url: string, options: { database?: string, version?: number, refresh_ms?: number } = {}): Promise<MongoReadStore> {
    const client = await new MongoClient(url).connect()
    const db = client.db(options.database)
    const active = await MongoReadStore.activeVersion(db)
    const store = new MongoReadStore(client, db, options.version ?? active, options.version !== undefined)
    await store.createIndexes()
    if (!store.pinned) {
      store.timer = setInterval(() => { void MongoReadStore.activeVersion(db).then(v => { store.version = v }, () => undefined) }, options.refresh_ms ?? 2_000)
      store.timer.unref()
    }
    return store
  }

  private static async activeVersion (db: Db): Promise<number> {
    const row = await db.collection('read_model_versions').findOne({ _id: 'active' as unknown as Document['_id'] })
    return typeof row?.version === 'number' ? row.version : 1
  }

  /** The version this store reads and writes. */
  get readVersion (): number { return this.version }

  private named (name: string): string { return `${name}__v${this.version}` }

  private async createIndexes (): Promise<void> {
    for (const [name, indexes] of Object.entries(INDEXES)) {
      for (const index of indexes) await this.db.collection(this.named(name)).createIndex(index)
    }
  }

  /**
   * Makes this store's (pinned) version the active one, if the active one is still
   * `expected` (compare-and-set). @returns whether the switch happened.
   */
  async activate (expected: number): Promise<boolean> {
    const r = await this.db.collection('read_model_versions').updateOne(
      { _id: 'active' as unknown as Document['_id'], $or: [{ version: expected }, { version: { $exists: false } }] },
      { $set: { version: this.version, switched_at: new Date().toISOString() } },
      { upsert: true }
    ).catch(err => { if (isDuplicateKey(err)) return { modifiedCount: 0, upsertedCount: 0 }; throw err })
    return r.modifiedCount + r.upsertedCount === 1
  }

  collection<T extends Doc> (name: string): Collection<T> {
    return new MongoCollection<T>(this.db, () => this.named(name))
  }

  async getCheckpoint (projection: string): Promise<number> {
    const row = await this.db.collection(this.named('checkpoints')).findOne({ _id: projection as unknown as Document['_id'] })
    return typeof row?.position === 'number' ? row.position : 0
  }

  async setCheckpoint (projection: string, position: number): Promise<void> {
    try {
      await this.db.collection(this.named('checkpoints')).updateOne({ _id: projection as unknown as Document['_id'], position: { $lt: position } }, { $set: { position } }, { upsert: true })
    } catch (err) {
      if (!isDuplicateKey(err)) throw err
    }
  }

  /** Drops the database (tests). */
  async drop (): Promise<void> { await this.db.dropDatabase() }

  async close (): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.client.close()
  }
}
