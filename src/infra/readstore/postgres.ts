import type pg from 'pg'
import { StorePool } from '../postgres/pool.ts'
import { migrated } from '../postgres/schema.ts'
import { ident, whereSql as whereOf, type WhereDialect } from './sqlite-sql.ts'
import {
  CheckpointConflictError,
  type Collection,
  type CollectionSpec,
  type Doc,
  type Query,
  type ReadStore,
  type RebuildTarget,
  type Where,
  type WriteOp
} from '../../ports/read-store.ts'

/** The key of the session lock every generation change runs under (the schema's own tables are made by `migrate`). */
const DDL_LOCK = 7_261_002

const tableOf = (spec: CollectionSpec, gen: number): string => `${ident(spec.name)}__g${gen}`
const checkpointName = (projection: string, gen: number): string => `${projection}#${gen}`

/** A document field as stored in its column (typed: text, double precision, boolean). */
function column(value: unknown): string | number | boolean | null {
  if (value === undefined || value === null) return null
  if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value
  return JSON.stringify(value)
}

/** PostgreSQL's way of writing a `where`: `$n` placeholders, typed values. */
const POSTGRES: WhereDialect<string | number | boolean | null> = { param: n => `$${n}`, column, none: 'false' }

class PostgresCollection<T extends Doc> implements Collection<T> {
  private readonly store: PostgresReadStore
  private readonly spec: CollectionSpec
  constructor(store: PostgresReadStore, spec: CollectionSpec) {
    this.store = store
    this.spec = spec
  }

  async get(id: string): Promise<T | null> {
    const table = await this.store.tableFor(this.spec)
    const r = await this.store.query<{ doc: string }>(`SELECT doc FROM ${table} WHERE _id = $1`, [id])
    return r.length > 0 ? (JSON.parse(r[0].doc) as T) : null
  }

  async find(query: Query = {}): Promise<T[]> {
    if (query.use_index !== undefined && !this.spec.indexes.some(ix => ix.length === query.use_index!.length && ix.every((f, k) => f === query.use_index![k])))
      throw new Error(`${this.spec.name}: no index on ${query.use_index.join(', ')}`)
    const table = await this.store.tableFor(this.spec)
    const w = whereOf(this.spec, query.where, POSTGRES)
    const keys = query.sort ?? []
    const sort = keys.map(([f, d]) => {
      if (f !== '_id' && !(f in this.spec.fields)) throw new Error(`${this.spec.name}: cannot sort on ${f}`)
      // NULLs sort first ascending and last descending, as SQLite sorts them.
      return `${f === '_id' ? '_id' : ident(f)} ${d === -1 ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`
    })
    const last = keys.length > 0 ? keys[keys.length - 1] : null
    const tiebreak = last?.[0] === '_id' ? [] : [`_id ${last?.[1] === -1 ? 'DESC' : 'ASC'}`]
    const order = ` ORDER BY ${[...sort, ...tiebreak].join(', ')}`
    const params = [...w.params]
    let page = ''
    if (query.limit !== undefined) page += ` LIMIT $${params.push(query.limit)}`
    if (query.offset !== undefined) page += ` OFFSET $${params.push(query.offset)}`
    const rows = await this.store.query<{ doc: string }>(`SELECT doc FROM ${table}${w.sql}${order}${page}`, params)
    return rows.map(r => JSON.parse(r.doc) as T)
  }

  async findOne(where: Where): Promise<T | null> {
    return (await this.find({ where, limit: 1 }))[0] ?? null
  }

  async count(where?: Where): Promise<number> {
    const table = await this.store.tableFor(this.spec)
    const w = whereOf(this.spec, where, POSTGRES)
    return Number((await this.store.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}${w.sql}`, w.params))[0].n)
  }
}

export interface PostgresReadStoreOptions {
  /** The schema the tables live in (created when absent); default `public`. */
  schema?: string
  /** Connections of the pool (default 4). */
  pool_size?: number
  /** Projections pinned to a generation (a rebuild's view). */
  pinned?: ReadonlyMap<string, number>
  /** Shares the pool of another store (a rebuild's view of the same database). */
  pool?: StorePool
}

/**
 * Read models on PostgreSQL: a table per collection and generation, `_id` and the
 * document's JSON plus one typed column per declared field (text in byte order, `COLLATE
 * "C"`, as SQLite compares), with the declared indexes (each ending in `_id`). A batch of
 * writes and its checkpoints commit in one transaction after a compare-and-set of the
 * checkpoints, their rows locked (`FOR UPDATE`) so that two projectors cannot both pass it.
 * Generation changes (prepare, a rebuild's switch) run under an advisory lock; readers see a
 * switch made by another process within 200 ms. The projector lease is one row updated only
 * by its holder or after it expired.
 */
export class PostgresReadStore implements ReadStore {
  readonly durable = true
  private readonly pool: StorePool
  private readonly owns: boolean
  private readonly schema: string
  private readonly pinned: ReadonlyMap<string, number>
  private gens = new Map<string, number>()
  private checkedAt = 0

  constructor(url: string, options: PostgresReadStoreOptions = {}) {
    this.schema = options.schema ?? 'public'
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.schema)) throw new Error(`schema ${this.schema}: a lower-case SQL identifier`)
    this.owns = options.pool === undefined
    this.pool = options.pool ?? new StorePool(url, { max: options.pool_size ?? 4, schema: this.schema })
    this.pinned = options.pinned ?? new Map()
    // The schema is made (or migrated) before the first query; a server not reached yet is tried again by the next one.
    migrated(this.pool, this.schema).catch(() => {})
  }

  /** The schema at its last migration (once per pool; again after a failure). */
  private async ready(): Promise<void> {
    await migrated(this.pool, this.schema)
  }

  /** Runs `f` on one connection under the session lock DDL_LOCK (schema and generation changes, across processes). */
  private async locked<R>(f: (c: pg.PoolClient) => Promise<R>): Promise<R> {
    const c = await this.pool.connect()
    try {
      await c.query('SELECT pg_advisory_lock($1)', [DDL_LOCK])
      try {
        return await f(c)
      } finally {
        await c.query('SELECT pg_advisory_unlock($1)', [DDL_LOCK])
      }
    } finally {
      c.release()
    }
  }

  /** Rows of a query on the pool. */
  async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    await this.ready()
    return (await this.pool.query<R>(sql, params)).rows
  }

  private async reloadGenerations(): Promise<void> {
    const rows = await this.query<{ projection: string; gen: number }>('SELECT projection, gen FROM projection_generations')
    this.gens = new Map(rows.map(r => [r.projection, Number(r.gen)]))
    this.checkedAt = Date.now()
  }

  /** The generation a projection's collections are read and written in (re-read at most every 200 ms). */
  private async genOf(projection: string): Promise<number> {
    const pinned = this.pinned.get(projection)
    if (pinned !== undefined) return pinned
    if (Date.now() - this.checkedAt > 200 || !this.gens.has(projection)) await this.reloadGenerations()
    const gen = this.gens.get(projection)
    if (gen === undefined) throw new Error(`projection ${projection} is not prepared`)
    return gen
  }

  async tableFor(spec: CollectionSpec): Promise<string> {
    return tableOf(spec, await this.genOf(spec.projection))
  }

  collection<T extends Doc>(spec: CollectionSpec): Collection<T> {
    return new PostgresCollection<T>(this, spec)
  }

  private async createTables(c: pg.PoolClient, specs: readonly CollectionSpec[], gen: number, indexes = true): Promise<void> {
    for (const spec of specs) {
      const table = tableOf(spec, gen)
      const columns = Object.entries(spec.fields).map(
        ([f, type]) => `${ident(f)} ${type === 'number' ? 'double precision' : type === 'boolean' ? 'boolean' : 'text COLLATE "C"'}`
      )
      await c.query(`CREATE TABLE IF NOT EXISTS ${table} (_id text COLLATE "C" PRIMARY KEY, doc text NOT NULL${columns.map(x => `, ${x}`).join('')})`)
      if (indexes) await this.createIndexes(c, spec, gen)
    }
  }

  private async createIndexes(c: pg.PoolClient, spec: CollectionSpec, gen: number): Promise<void> {
    const table = tableOf(spec, gen)
    for (const [i, fields] of spec.indexes.entries())
      await c.query(`CREATE INDEX IF NOT EXISTS ${table}_i${i} ON ${table} (${[...fields.map(ident), '_id'].join(', ')})`)
  }

  /** Drops every generation of a projection but `keep` (older ones and abandoned rebuilds). */
  private async dropGenerationsExcept(c: pg.PoolClient, projection: string, specs: readonly CollectionSpec[], keep: number): Promise<void> {
    const tables = (await c.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = $1', [this.schema])).rows
    for (const spec of specs)
      for (const { name } of tables) {
        const m = new RegExp(`^${spec.name}__g(\\d+)$`).exec(name)
        if (m && Number(m[1]) !== keep) {
          await c.query(`DROP TABLE IF EXISTS ${name}`)
          await c.query('DELETE FROM projection_checkpoints WHERE name = $1', [checkpointName(projection, Number(m[1]))])
        }
      }
  }

  async prepare(projection: string, signature: string, specs: readonly CollectionSpec[]): Promise<void> {
    await this.ready()
    await this.locked(async c => {
      const row = (
        await c.query<{ gen: number; signature: string; newest: number }>('SELECT gen, signature, newest FROM projection_generations WHERE projection = $1', [
          projection
        ])
      ).rows[0]
      if (row && row.signature === signature) {
        await this.createTables(c, specs, Number(row.gen))
        return
      }
      const gen = row ? Number(row.newest) + 1 : 1
      await this.createTables(c, specs, gen)
      await c.query(
        'INSERT INTO projection_generations (projection, gen, signature, newest) VALUES ($1, $2, $3, $4) ON CONFLICT (projection) DO UPDATE SET gen = excluded.gen, signature = excluded.signature, newest = excluded.newest',
        [projection, gen, signature, gen]
      )
      await this.dropGenerationsExcept(c, projection, specs, gen)
    })
    await this.reloadGenerations()
  }

  async startRebuild(projection: string, specs: readonly CollectionSpec[]): Promise<RebuildTarget> {
    await this.ready()
    const { live, next } = await this.locked(async c => {
      const row = (await c.query<{ gen: number; newest: number }>('SELECT gen, newest FROM projection_generations WHERE projection = $1', [projection])).rows[0]
      if (!row) throw new Error(`projection ${projection} is not prepared`)
      const live = Number(row.gen)
      const next = Number(row.newest) + 1
      await this.dropGenerationsExcept(c, projection, specs, live)
      // Without secondary indexes while it fills (a rebuild only reads by _id): built once, at the end.
      await this.createTables(c, specs, next, false)
      await c.query('UPDATE projection_generations SET newest = $1 WHERE projection = $2', [next, projection])
      return { live, next }
    })
    const view = new PostgresReadStore('', { schema: this.schema, pool: this.pool, pinned: new Map([...this.pinned, [projection, next]]) })
    return {
      store: view,
      activate: async () =>
        await this.locked(async c => {
          // Not when another rebuild switched first, nor when a later rebuild dropped this one's tables (abandoned).
          const row = (await c.query<{ gen: number }>('SELECT gen FROM projection_generations WHERE projection = $1', [projection])).rows[0]
          const names = new Set(
            (await c.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = $1', [this.schema])).rows.map(r => r.name)
          )
          if (Number(row?.gen) !== live || !specs.every(spec => names.has(tableOf(spec, next)))) return false
          for (const spec of specs) {
            await this.createIndexes(c, spec, next)
            await c.query(`ANALYZE ${tableOf(spec, next)}`)
          }
          const switched =
            (await c.query('UPDATE projection_generations SET gen = $1 WHERE projection = $2 AND gen = $3', [next, projection, live])).rowCount === 1
          await this.reloadGenerations()
          return switched
        })
    }
  }

  async write(ops: readonly WriteOp[], checkpoints: ReadonlyArray<{ projection: string; from: number; to: number }>): Promise<void> {
    await this.ready()
    const c = await this.pool.connect()
    try {
      await c.query('BEGIN')
      // The generations as this batch was judged: a switch committed meanwhile is seen by the next batch.
      const gens = new Map<string, number>()
      for (const w of ops) if (!gens.has(w.spec.projection)) gens.set(w.spec.projection, await this.genOf(w.spec.projection))
      for (const cp of checkpoints) if (!gens.has(cp.projection)) gens.set(cp.projection, await this.genOf(cp.projection))
      for (const cp of checkpoints) {
        const name = checkpointName(cp.projection, gens.get(cp.projection)!)
        await c.query('INSERT INTO projection_checkpoints (name, position) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING', [name])
        const actual = Number(
          (await c.query<{ position: string }>('SELECT position FROM projection_checkpoints WHERE name = $1 FOR UPDATE', [name])).rows[0].position
        )
        if (actual !== cp.from) throw new CheckpointConflictError(cp.projection, cp.from, actual)
      }
      for (const w of ops) {
        const table = tableOf(w.spec, gens.get(w.spec.projection)!)
        if (w.op === 'delete') {
          await c.query(`DELETE FROM ${table} WHERE _id = $1`, [w.id])
          continue
        }
        if (w.op === 'deleteWhere') {
          const where = whereOf(w.spec, w.where, POSTGRES)
          await c.query(`DELETE FROM ${table}${where.sql}`, where.params)
          continue
        }
        const fields = Object.keys(w.spec.fields).map(ident)
        const columns = ['_id', 'doc', ...fields]
        await c.query(
          `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (_id) DO UPDATE SET ${columns
            .slice(1)
            .map(f => `${f} = excluded.${f}`)
            .join(', ')}`,
          [w.doc._id, JSON.stringify(w.doc), ...fields.map(f => column(w.doc[f]))]
        )
      }
      for (const cp of checkpoints)
        await c.query('UPDATE projection_checkpoints SET position = $2 WHERE name = $1', [checkpointName(cp.projection, gens.get(cp.projection)!), cp.to])
      // A generation switched meanwhile (its table dropped, or another one live): nothing lands in a generation the batch was not judged against.
      for (const [projection, gen] of gens) {
        const live = (await c.query<{ gen: number }>('SELECT gen FROM projection_generations WHERE projection = $1 FOR SHARE', [projection])).rows[0]
        if (!this.pinned.has(projection) && Number(live?.gen) !== gen) throw new CheckpointConflictError(projection, gen, Number(live?.gen))
      }
      await c.query('COMMIT')
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {})
      throw err
    } finally {
      c.release()
    }
  }

  async getCheckpoint(projection: string): Promise<number> {
    const r = await this.query<{ position: string }>('SELECT position FROM projection_checkpoints WHERE name = $1', [
      checkpointName(projection, await this.genOf(projection))
    ])
    return r.length > 0 ? Number(r[0].position) : 0
  }

  async getConsumerCheckpoint(name: string): Promise<number> {
    const r = await this.query<{ position: string }>('SELECT position FROM consumer_checkpoints WHERE name = $1', [name])
    return r.length > 0 ? Number(r[0].position) : 0
  }

  async setConsumerCheckpoint(name: string, position: number): Promise<void> {
    await this.query('INSERT INTO consumer_checkpoints (name, position) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET position = excluded.position', [
      name,
      position
    ])
  }

  /**
   * The lease's times are the server's clock (milliseconds since the epoch at the statement's
   * execution): every process judges expiry on one clock, and a call that waited for a
   * connection is not given a lease that is already over when it returns.
   */
  async lease(holder: string, ttlMs: number): Promise<boolean> {
    const r = await this.query<{ holder: string }>(
      `WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)
       INSERT INTO projector_lease (id, holder, expires_at) SELECT 1, $1, ms + $2 FROM now
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE projector_lease.holder = excluded.holder OR projector_lease.expires_at < (SELECT ms FROM now)
       RETURNING holder`,
      [holder, ttlMs]
    )
    return r.length === 1 && r[0].holder === holder
  }

  async close(): Promise<void> {
    if (this.owns) await this.pool.end()
  }
}
