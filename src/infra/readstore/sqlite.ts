import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { preparePrivateDatabase } from '../private-files.ts'
import { WalCheckpointer } from '../sqlite-checkpointer.ts'
import { immediateTransaction } from '../sqlite-transaction.ts'
import { column, ident, indexedBy, whereSql } from './sqlite-sql.ts'
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

const META = `
CREATE TABLE IF NOT EXISTS projection_generations (projection TEXT PRIMARY KEY, gen INTEGER NOT NULL, signature TEXT NOT NULL, newest INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS projection_checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS consumer_checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS projector_lease (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, expires_at INTEGER NOT NULL);
`
const tableOf = (spec: CollectionSpec, gen: number): string => `${ident(spec.name)}__g${gen}`
const checkpointName = (projection: string, gen: number): string => `${projection}#${gen}`

class SqliteCollection<T extends Doc> implements Collection<T> {
  private readonly store: SqliteReadStore
  private readonly spec: CollectionSpec
  constructor(store: SqliteReadStore, spec: CollectionSpec) {
    this.store = store
    this.spec = spec
  }

  private get table(): string {
    return this.store.tableFor(this.spec)
  }

  async get(id: string): Promise<T | null> {
    const row = this.store.statement(`SELECT doc FROM ${this.table} WHERE _id = ?`).get(id) as { doc: string } | undefined
    return row ? (JSON.parse(row.doc) as T) : null
  }

  async find(query: Query = {}): Promise<T[]> {
    const w = whereSql(this.spec, query.where)
    const keys = query.sort ?? []
    const sort = keys.map(([f, d]) => {
      if (f !== '_id' && !(f in this.spec.fields)) throw new Error(`${this.spec.name}: cannot sort on ${f}`)
      return `${f === '_id' ? '_id' : ident(f)} ${d === -1 ? 'DESC' : 'ASC'}`
    })
    const last = keys.length > 0 ? keys[keys.length - 1] : null
    const tiebreak = last?.[0] === '_id' ? [] : [`_id ${last?.[1] === -1 ? 'DESC' : 'ASC'}`]
    const order = ` ORDER BY ${[...sort, ...tiebreak].join(', ')}`
    const page = query.limit !== undefined || query.offset !== undefined ? ' LIMIT ? OFFSET ?' : ''
    const params = page ? [...w.params, query.limit ?? -1, query.offset ?? 0] : w.params
    const rows = this.store
      .statement(`SELECT doc FROM ${this.table}${indexedBy(this.spec, this.table, query.use_index)}${w.sql}${order}${page}`)
      .all(...params) as Array<{ doc: string }>
    return rows.map(r => JSON.parse(r.doc) as T)
  }

  async findOne(where: Where): Promise<T | null> {
    return (await this.find({ where, limit: 1 }))[0] ?? null
  }

  async count(where?: Where): Promise<number> {
    const w = whereSql(this.spec, where)
    return Number((this.store.statement(`SELECT COUNT(*) AS n FROM ${this.table}${w.sql}`).get(...w.params) as { n: number }).n)
  }
}

export interface SqliteReadStoreOptions {
  /** Page cache, KiB (memory does not grow with the data beyond it). */
  cache_kib?: number
  /** Projections pinned to a generation (a rebuild's view). */
  pinned?: ReadonlyMap<string, number>
  /** Shares the connection of another store (a rebuild's view of the same file). */
  db?: DatabaseSync
  /** How often (ms) a worker thread checkpoints the WAL (0: SQLite's automatic checkpoints, in the committing call). */
  checkpoint_interval_ms?: number
}

/**
 * Read models on one SQLite file (`DATA_DIR/reads.db`, WAL): a table per collection and
 * generation, `_id` and the document's JSON plus one column per declared field, with the
 * declared indexes (each ending in `_id`), so that every query a route makes is an index
 * range. A batch of writes and its checkpoints commit in one `BEGIN IMMEDIATE`
 * transaction after a compare-and-set of the checkpoints. Readers follow generation
 * switches made by other processes (a rebuild) by re-reading the generation table when
 * the file changed (`PRAGMA data_version`), at most every 200 ms. The WAL is checkpointed
 * by a worker thread (`../sqlite-checkpointer.ts`), not inside commits. Memory: the page
 * cache (`cache_kib`) and a bounded statement cache.
 */
export class SqliteReadStore implements ReadStore {
  readonly durable = true
  private readonly db: DatabaseSync
  private readonly owns: boolean
  private readonly pinned: ReadonlyMap<string, number>
  private readonly statements = new Map<string, StatementSync>()
  private gens = new Map<string, number>()
  private checked = { at: 0, version: -1 }
  private readonly file: string
  private readonly checkpointer: WalCheckpointer | null = null

  constructor(file: string, options: SqliteReadStoreOptions = {}) {
    this.file = file
    this.owns = options.db === undefined
    if (this.owns) preparePrivateDatabase(file)
    this.db = options.db ?? new DatabaseSync(file, { timeout: 10_000 })
    this.pinned = options.pinned ?? new Map()
    if (this.owns) {
      this.db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = FAST; PRAGMA cache_size = -${options.cache_kib ?? 16_384};`)
      this.db.exec(META)
      const interval = options.checkpoint_interval_ms ?? 500
      if (interval > 0) {
        this.db.exec('PRAGMA wal_autocheckpoint = 0')
        this.checkpointer = new WalCheckpointer(file, interval)
      }
    }
    this.reloadGenerations()
  }

  /** A cached prepared statement (at most 512 kept). */
  statement(sql: string): StatementSync {
    let st = this.statements.get(sql)
    if (!st) {
      st = this.db.prepare(sql)
      if (this.statements.size >= 512) this.statements.delete(this.statements.keys().next().value as string)
      this.statements.set(sql, st)
    }
    return st
  }

  private reloadGenerations(): void {
    const rows = this.db.prepare('SELECT projection, gen FROM projection_generations').all() as Array<{ projection: string; gen: number }>
    this.gens = new Map(rows.map(r => [r.projection, Number(r.gen)]))
  }

  /** The generation a projection's collections are read and written in. */
  private genOf(projection: string): number {
    const pinned = this.pinned.get(projection)
    if (pinned !== undefined) return pinned
    const now = Date.now()
    if (now - this.checked.at > 200) {
      this.checked.at = now
      const version = Number((this.statement('PRAGMA data_version').get() as { data_version: number }).data_version)
      if (version !== this.checked.version) {
        this.checked.version = version
        this.reloadGenerations()
      }
    }
    const gen = this.gens.get(projection)
    if (gen === undefined) throw new Error(`projection ${projection} is not prepared`)
    return gen
  }

  tableFor(spec: CollectionSpec): string {
    return tableOf(spec, this.genOf(spec.projection))
  }

  collection<T extends Doc>(spec: CollectionSpec): Collection<T> {
    return new SqliteCollection<T>(this, spec)
  }

  /** The tables of a generation, with their secondary indexes unless `indexes` is false (a rebuild adds them at the end). */
  private createTables(specs: readonly CollectionSpec[], gen: number, indexes = true): void {
    for (const spec of specs) {
      const table = tableOf(spec, gen)
      const columns = Object.entries(spec.fields).map(([f, type]) => `${ident(f)} ${type === 'number' ? 'REAL' : type === 'boolean' ? 'INTEGER' : 'TEXT'}`)
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${table} (_id TEXT PRIMARY KEY, doc TEXT NOT NULL${columns.map(c => `, ${c}`).join('')})`)
      if (indexes) this.createIndexes(spec, gen)
    }
  }

  private createIndexes(spec: CollectionSpec, gen: number): void {
    const table = tableOf(spec, gen)
    spec.indexes.forEach((fields, i) => {
      this.db.exec(`CREATE INDEX IF NOT EXISTS ${table}_i${i} ON ${table} (${[...fields.map(ident), '_id'].join(', ')})`)
    })
  }

  /**
   * Drops every generation of a projection but `keep`: older ones (switched away from at
   * least one rebuild ago: no reader follows them any more) and abandoned rebuilds.
   */
  private dropGenerationsExcept(projection: string, specs: readonly CollectionSpec[], keep: number): void {
    const tables = this.db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>
    for (const spec of specs) {
      for (const { name } of tables) {
        const m = new RegExp(`^${spec.name}__g(\\d+)$`).exec(name)
        if (m && Number(m[1]) !== keep) {
          this.db.exec(`DROP TABLE IF EXISTS ${name}`)
          this.db.prepare('DELETE FROM projection_checkpoints WHERE name = ?').run(checkpointName(projection, Number(m[1])))
        }
      }
    }
  }

  async prepare(projection: string, signature: string, specs: readonly CollectionSpec[]): Promise<void> {
    immediateTransaction(this.db, () => {
      const row = this.db.prepare('SELECT gen, signature, newest FROM projection_generations WHERE projection = ?').get(projection) as
        | { gen: number; signature: string; newest: number }
        | undefined
      if (row && row.signature === signature) {
        this.createTables(specs, Number(row.gen))
        return
      }
      const gen = row ? Number(row.newest) + 1 : 1
      this.createTables(specs, gen)
      this.db
        .prepare(
          'INSERT INTO projection_generations (projection, gen, signature, newest) VALUES (?, ?, ?, ?) ON CONFLICT (projection) DO UPDATE SET gen = excluded.gen, signature = excluded.signature, newest = excluded.newest'
        )
        .run(projection, gen, signature, gen)
      this.dropGenerationsExcept(projection, specs, gen)
    })
    this.reloadGenerations()
  }

  async startRebuild(projection: string, specs: readonly CollectionSpec[]): Promise<RebuildTarget> {
    const { live, next } = immediateTransaction(this.db, () => {
      const row = this.db.prepare('SELECT gen, newest FROM projection_generations WHERE projection = ?').get(projection) as
        | { gen: number; newest: number }
        | undefined
      if (!row) throw new Error(`projection ${projection} is not prepared`)
      const live = Number(row.gen)
      const next = Number(row.newest) + 1
      this.dropGenerationsExcept(projection, specs, live)
      // Without secondary indexes while it fills (a rebuild only reads by _id): built once, in order, at the end.
      this.createTables(specs, next, false)
      this.db.prepare('UPDATE projection_generations SET newest = ? WHERE projection = ?').run(next, projection)
      return { live, next }
    })
    const view = new SqliteReadStore(this.file, { db: this.db, pinned: new Map([...this.pinned, [projection, next]]) })
    return {
      store: view,
      activate: async () => {
        // Not when another rebuild switched first, nor when a later rebuild dropped this one's tables (abandoned).
        const row = this.db.prepare('SELECT gen FROM projection_generations WHERE projection = ?').get(projection) as { gen: number } | undefined
        const tables = specs.map(spec => tableOf(spec, next))
        const present = tables.every(name => this.db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name) !== undefined)
        if (Number(row?.gen) !== live || !present) return false
        for (const spec of specs) this.createIndexes(spec, next)
        // Statistics for the planner's choice between indexes, from a sample of each new table.
        this.db.exec('PRAGMA analysis_limit = 1000')
        for (const spec of specs) this.db.exec(`ANALYZE ${tableOf(spec, next)}`)
        const switched = immediateTransaction(
          this.db,
          () => Number(this.db.prepare('UPDATE projection_generations SET gen = ? WHERE projection = ? AND gen = ?').run(next, projection, live).changes) === 1
        )
        this.reloadGenerations()
        return switched
      }
    }
  }

  async write(ops: readonly WriteOp[], checkpoints: ReadonlyArray<{ projection: string; from: number; to: number }>): Promise<void> {
    immediateTransaction(this.db, () => {
      for (const c of checkpoints) {
        const name = checkpointName(c.projection, this.genOf(c.projection))
        const row = this.statement('SELECT position FROM projection_checkpoints WHERE name = ?').get(name) as { position: number } | undefined
        const actual = row ? Number(row.position) : 0
        if (actual !== c.from) throw new CheckpointConflictError(c.projection, c.from, actual)
      }
      for (const w of ops) {
        const table = this.tableFor(w.spec)
        if (w.op === 'delete') {
          this.statement(`DELETE FROM ${table} WHERE _id = ?`).run(w.id)
          continue
        }
        if (w.op === 'deleteWhere') {
          const where = whereSql(w.spec, w.where)
          this.statement(`DELETE FROM ${table}${where.sql}`).run(...where.params)
          continue
        }
        const fields = Object.keys(w.spec.fields)
        this.statement(`INSERT OR REPLACE INTO ${table} (_id, doc${fields.map(f => `, ${f}`).join('')}) VALUES (?, ?${fields.map(() => ', ?').join('')})`).run(
          w.doc._id,
          JSON.stringify(w.doc),
          ...fields.map(f => column(w.doc[f]))
        )
      }
      for (const c of checkpoints) {
        this.statement('INSERT INTO projection_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position').run(
          checkpointName(c.projection, this.genOf(c.projection)),
          c.to
        )
      }
    })
  }

  async getCheckpoint(projection: string): Promise<number> {
    const row = this.statement('SELECT position FROM projection_checkpoints WHERE name = ?').get(checkpointName(projection, this.genOf(projection))) as
      | { position: number }
      | undefined
    return row ? Number(row.position) : 0
  }

  async getConsumerCheckpoint(name: string): Promise<number> {
    const row = this.statement('SELECT position FROM consumer_checkpoints WHERE name = ?').get(name) as { position: number } | undefined
    return row ? Number(row.position) : 0
  }

  async setConsumerCheckpoint(name: string, position: number): Promise<void> {
    this.statement('INSERT INTO consumer_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position').run(
      name,
      position
    )
  }

  async lease(holder: string, ttlMs: number): Promise<boolean> {
    const now = Date.now()
    return immediateTransaction(this.db, () => {
      this.statement(
        'INSERT INTO projector_lease (id, holder, expires_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at WHERE projector_lease.holder = excluded.holder OR projector_lease.expires_at < ?'
      ).run(holder, now + ttlMs, now)
      return (this.statement('SELECT holder FROM projector_lease WHERE id = 1').get() as { holder: string }).holder === holder
    })
  }

  async close(): Promise<void> {
    if (!this.owns || !this.db.isOpen) return
    await this.checkpointer?.close()
    this.db.close()
  }
}
