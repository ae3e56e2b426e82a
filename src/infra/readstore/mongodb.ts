import { MongoClient, MongoServerError, type AnyBulkWriteOperation, type ClientSession, type Db, type Document, type Filter, type Sort } from 'mongodb'
import { CheckpointConflictError } from '../../ports/read-store.ts'
import type * as port from '../../ports/read-store.ts'

const isDuplicateKey = (err: unknown): boolean => err instanceof MongoServerError && err.code === 11000
const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const idOf = (id: string): Document['_id'] => id as unknown as Document['_id']
const collectionName = (spec: port.CollectionSpec, gen: number): string => `${spec.name}__g${gen}`
const checkpointName = (projection: string, gen: number): string => `${projection}#${gen}`

/** A `where` as a MongoDB filter: equality, `$in`, `$gte`/`$lte`, an anchored prefix regex (index-backed). */
function toFilter(spec: port.CollectionSpec, where: port.Where | undefined): Filter<Document> {
  const out: Record<string, unknown> = {}
  for (const [field, cond] of Object.entries(where ?? {})) {
    if (cond === undefined) continue
    if (field !== '_id' && !(field in spec.fields)) throw new Error(`${spec.name}: ${field} is not a queryable field`)
    const c = cond as port.Condition
    if (c === null || typeof c !== 'object') out[field] = c
    else if ('in' in c) out[field] = { $in: c.in }
    else if ('prefix' in c) out[field] = { $regex: `^${escapeRegex(c.prefix)}` }
    else out[field] = { ...(c.gte !== undefined && { $gte: c.gte }), ...(c.lte !== undefined && { $lte: c.lte }) }
  }
  return out as Filter<Document>
}

/**
 * Refuses a server that cannot run transactions: read models commit a batch and its
 * checkpoints in one, and MongoDB runs transactions only on a replica set (a single-node
 * one will do) or through mongos. @throws Error saying so, at connect rather than at the
 * first projection batch.
 */
export async function requireReplicaSet(client: Pick<MongoClient, 'db'>): Promise<void> {
  const hello = await client.db('admin').command({ hello: 1 })
  if (typeof hello.setName === 'string' || hello.msg === 'isdbgrid') return
  throw new Error(
    'MONGODB_URL names a standalone MongoDB server: the read models commit in transactions, which need a replica set (a single-node one will do: start mongod with --replSet rs0, run rs.initiate() once, add ?replicaSet=rs0 to the URL)'
  )
}

class MongoCollection<T extends port.Doc> implements port.Collection<T> {
  private readonly store: MongoReadStore
  private readonly spec: port.CollectionSpec
  constructor(store: MongoReadStore, spec: port.CollectionSpec) {
    this.store = store
    this.spec = spec
  }
  private get c(): ReturnType<Db['collection']> {
    return this.store.collectionFor(this.spec)
  }

  async get(id: string): Promise<T | null> {
    return (await this.c.findOne({ _id: idOf(id) })) as T | null
  }

  async find(query: port.Query = {}): Promise<T[]> {
    const sort = (query.sort ?? []).map(([f, d]) => [f, d] as [string, 1 | -1])
    const last = sort.length > 0 ? sort[sort.length - 1] : null
    const tiebreak: Array<[string, 1 | -1]> = last?.[0] === '_id' ? [] : [['_id', last?.[1] ?? 1]]
    const hint = query.use_index
    if (hint !== undefined && !this.spec.indexes.some(ix => ix.length === hint.length && ix.every((f, k) => f === hint[k])))
      throw new Error(`${this.spec.name}: no index on ${hint.join(', ')}`)
    const cursor = this.c.find(toFilter(this.spec, query.where), {
      sort: [...sort, ...tiebreak] as Sort,
      skip: query.offset ?? 0,
      ...(query.limit !== undefined && { limit: query.limit }),
      // The index as createIndexes made it: its fields, then _id.
      ...(hint !== undefined && { hint: { ...Object.fromEntries(hint.map(f => [f, 1])), _id: 1 } })
    })
    return (await cursor.toArray()) as unknown as T[]
  }

  async findOne(where: port.Where): Promise<T | null> {
    return (await this.find({ where, limit: 1 }))[0] ?? null
  }

  async count(where?: port.Where): Promise<number> {
    return await this.c.countDocuments(toFilter(this.spec, where))
  }
}

/**
 * Read models in MongoDB (`MONGODB_URL`) with the official driver: a collection per
 * collection spec and generation (`jobs__g3`) with the declared indexes (each ending in
 * `_id`); generations, checkpoints and the projector lease in small meta collections. A
 * batch of writes and its checkpoints commit in one transaction (a replica set, as
 * docker-compose.yml runs) after a compare-and-set of the checkpoints. Readers follow
 * generation switches by re-reading the generations every `refresh_ms`.
 *
 * Not run against a live server in this repository's CI (none can be installed there);
 * it passes the read store contract suite wherever `MONGODB_URL` is set.
 */
export class MongoReadStore implements port.ReadStore {
  readonly durable = true
  private readonly client: MongoClient
  private readonly db: Db
  private readonly owns: boolean
  private readonly pinned: ReadonlyMap<string, number>
  private gens = new Map<string, number>()
  private timer: NodeJS.Timeout | null = null

  private constructor(client: MongoClient, db: Db, owns: boolean, pinned: ReadonlyMap<string, number>) {
    this.client = client
    this.db = db
    this.owns = owns
    this.pinned = pinned
  }

  /** Connects; the generations are re-read every `refresh_ms` (ms). */
  static async connect(url: string, options: { database?: string; refresh_ms?: number } = {}): Promise<MongoReadStore> {
    // `ignoreUndefined`: a field set to undefined is left out, as JSON (the embedded store) leaves it out, not stored as null.
    const client = await new MongoClient(url, { ignoreUndefined: true }).connect()
    try {
      await requireReplicaSet(client)
    } catch (err) {
      await client.close()
      throw err
    }
    const store = new MongoReadStore(client, client.db(options.database), true, new Map())
    await store.reloadGenerations()
    store.timer = setInterval(() => {
      void store.reloadGenerations().catch(() => undefined)
    }, options.refresh_ms ?? 1_000)
    store.timer.unref()
    return store
  }

  private async reloadGenerations(): Promise<void> {
    const rows = await this.db.collection('projection_generations').find({}).toArray()
    this.gens = new Map(rows.map(r => [String(r._id), Number(r.gen)]))
  }

  private genOf(projection: string): number {
    const gen = this.pinned.get(projection) ?? this.gens.get(projection)
    if (gen === undefined) throw new Error(`projection ${projection} is not prepared`)
    return gen
  }

  collectionFor(spec: port.CollectionSpec): ReturnType<Db['collection']> {
    return this.db.collection(collectionName(spec, this.genOf(spec.projection)))
  }

  collection<T extends port.Doc>(spec: port.CollectionSpec): port.Collection<T> {
    return new MongoCollection<T>(this, spec)
  }

  private async createIndexes(specs: readonly port.CollectionSpec[], gen: number): Promise<void> {
    for (const spec of specs) {
      for (const fields of spec.indexes)
        await this.db.collection(collectionName(spec, gen)).createIndex({ ...Object.fromEntries(fields.map(f => [f, 1])), _id: 1 })
    }
  }

  /**
   * The projection's generation for `signature`: the live one when it has that signature,
   * else a new one (the newest + 1). Decided in one transaction, so two processes starting
   * at once agree on one generation (the loser of a race retries and finds the winner's);
   * the indexes are made after (idempotent: a new generation's collections are empty).
   */
  async prepare(projection: string, signature: string, specs: readonly port.CollectionSpec[]): Promise<void> {
    const meta = this.db.collection('projection_generations')
    let gen = 0
    for (let attempt = 1; ; attempt++) {
      const session = this.client.startSession()
      try {
        await session.withTransaction(async () => {
          const row = await meta.findOne({ _id: idOf(projection) }, { session })
          if (row && row.signature === signature) gen = Number(row.gen)
          else {
            gen = row ? Number(row.newest) + 1 : 1
            await meta.updateOne({ _id: idOf(projection) }, { $set: { gen, signature, newest: gen } }, { upsert: true, session })
          }
        })
        break
      } catch (err) {
        if (isDuplicateKey(err) && attempt < 3) continue
        throw err
      } finally {
        await session.endSession()
      }
    }
    await this.createIndexes(specs, gen)
    await this.reloadGenerations()
  }

  async startRebuild(projection: string, specs: readonly port.CollectionSpec[]): Promise<port.RebuildTarget> {
    const meta = this.db.collection('projection_generations')
    const row = await meta.findOneAndUpdate({ _id: idOf(projection) }, { $inc: { newest: 1 } }, { returnDocument: 'after' })
    if (!row) throw new Error(`projection ${projection} is not prepared`)
    const live = Number(row.gen)
    const next = Number(row.newest)
    for (const spec of specs)
      for (const c of await this.db.listCollections({ name: { $regex: `^${spec.name}__g\\d+$` } }).toArray())
        if (Number(c.name.split('__g')[1]) < live) await this.db.collection(c.name).drop()
    await this.createIndexes(specs, next)
    const view = new MongoReadStore(this.client, this.db, false, new Map([...this.pinned, [projection, next]]))
    return {
      store: view,
      activate: async () => {
        const r = await meta.updateOne({ _id: idOf(projection), gen: live }, { $set: { gen: next } })
        await this.reloadGenerations()
        return r.modifiedCount === 1
      }
    }
  }

  /**
   * The generations a batch is judged and written in, read once inside its transaction: a
   * switch made meanwhile (a rebuild's `activate`) never splits a batch between two
   * generations, whatever the periodic reload of `gens` does between the transaction's
   * steps. Writers are pinned per batch; the next batch's compare-and-set meets the new
   * generation's checkpoint and the runner goes on from there.
   */
  private async generationsOf(projections: readonly string[], session: ClientSession): Promise<Map<string, number>> {
    const out = new Map<string, number>()
    const unpinned = projections.filter(p => {
      const g = this.pinned.get(p)
      if (g !== undefined) out.set(p, g)
      return g === undefined
    })
    if (unpinned.length > 0) {
      for (const row of await this.db
        .collection('projection_generations')
        .find({ _id: { $in: unpinned.map(idOf) } }, { session })
        .toArray())
        out.set(String(row._id), Number(row.gen))
    }
    for (const p of projections) if (!out.has(p)) throw new Error(`projection ${p} is not prepared`)
    return out
  }

  async write(ops: readonly port.WriteOp[], checkpoints: ReadonlyArray<{ projection: string; from: number; to: number }>): Promise<void> {
    const projections = [...new Set([...checkpoints.map(c => c.projection), ...ops.map(o => o.spec.projection)])]
    for (let attempt = 1; ; attempt++) {
      const session: ClientSession = this.client.startSession()
      try {
        await session.withTransaction(async () => {
          const gens = await this.generationsOf(projections, session)
          // Readers of this connection follow a switch as soon as a writer meets it.
          for (const [p, g] of gens) if (!this.pinned.has(p)) this.gens.set(p, g)
          const cps = this.db.collection('projection_checkpoints')
          // The checkpoints: read in one query, compared, then set in one bulk write.
          const names = checkpoints.map(c => checkpointName(c.projection, gens.get(c.projection)!))
          const stored = new Map(
            (await cps.find({ _id: { $in: names.map(idOf) } }, { session }).toArray()).map(r => [
              String(r._id),
              typeof r.position === 'number' ? r.position : 0
            ])
          )
          checkpoints.forEach((c, i) => {
            const actual = stored.get(names[i]) ?? 0
            if (actual !== c.from) throw new CheckpointConflictError(c.projection, c.from, actual)
          })
          if (checkpoints.length > 0)
            await cps.bulkWrite(
              checkpoints.map((c, i) => ({ updateOne: { filter: { _id: idOf(names[i]) }, update: { $set: { position: c.to } }, upsert: true } })),
              { session, ordered: true }
            )
          // The documents: one ordered bulk write per collection (each collection's writes in their order).
          const byCollection = new Map<string, AnyBulkWriteOperation<Document>[]>()
          for (const w of ops) {
            const name = collectionName(w.spec, gens.get(w.spec.projection)!)
            let list = byCollection.get(name)
            if (!list) byCollection.set(name, (list = []))
            if (w.op === 'delete') list.push({ deleteOne: { filter: { _id: idOf(w.id) } } })
            else if (w.op === 'deleteWhere') list.push({ deleteMany: { filter: toFilter(w.spec, w.where) } })
            else list.push({ replaceOne: { filter: { _id: idOf(w.doc._id) }, replacement: w.doc, upsert: true } })
          }
          for (const [name, list] of byCollection) await this.db.collection(name).bulkWrite(list, { session, ordered: true })
        })
        return
      } catch (err) {
        // Two first upserts of one checkpoint or document racing: the loser's retry meets the
        // winner's checkpoint and fails its compare-and-set (nothing of it written).
        if (isDuplicateKey(err) && attempt < 3) continue
        throw err
      } finally {
        await session.endSession()
      }
    }
  }

  async getCheckpoint(projection: string): Promise<number> {
    const row = await this.db.collection('projection_checkpoints').findOne({ _id: idOf(checkpointName(projection, this.genOf(projection))) })
    return typeof row?.position === 'number' ? row.position : 0
  }

  async getConsumerCheckpoint(name: string): Promise<number> {
    const row = await this.db.collection('consumer_checkpoints').findOne({ _id: idOf(name) })
    return typeof row?.position === 'number' ? row.position : 0
  }

  async setConsumerCheckpoint(name: string, position: number): Promise<void> {
    await this.db.collection('consumer_checkpoints').updateOne({ _id: idOf(name) }, { $set: { position } }, { upsert: true })
  }

  async lease(holder: string, ttlMs: number): Promise<boolean> {
    const now = Date.now()
    try {
      const r = await this.db
        .collection('projector_lease')
        .findOneAndUpdate(
          { _id: idOf('lease'), $or: [{ holder }, { expires_at: { $lt: now } }] },
          { $set: { holder, expires_at: now + ttlMs } },
          { upsert: true, returnDocument: 'after' }
        )
      return r?.holder === holder
    } catch (err) {
      if (isDuplicateKey(err)) return false // held by another: the upsert met its document
      throw err
    }
  }

  /** Drops the database (tests). */
  async drop(): Promise<void> {
    await this.db.dropDatabase()
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    if (this.owns) await this.client.close()
  }
}
