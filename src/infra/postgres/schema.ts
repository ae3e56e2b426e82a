import type pg from 'pg'

/** The key of the session advisory lock migrations run under (several processes may start at once). */
const MIGRATION_LOCK = 7_261_000

/**
 * The schema's migrations, in order; each runs once per schema, in a transaction with the
 * row that records it in `schema_migrations`. Never edit one that has shipped: add the next.
 * Those up to 3 use `IF NOT EXISTS`: a database made by the stores before migrations were
 * recorded takes them as they are.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'events',
    // A global position given under the append lock (a gapless sequence in commit order, never a
    // SQL sequence: transactions commit out of the order their values were drawn in, and a
    // reader following the log would skip the late ones), unique per (stream, revision) and per id;
    // and the checkpoints of named consumers.
    sql: `
CREATE TABLE IF NOT EXISTS events (
  position bigint PRIMARY KEY,
  id text NOT NULL UNIQUE,
  stream text NOT NULL,
  revision integer NOT NULL,
  type text NOT NULL,
  data text NOT NULL,
  metadata text NOT NULL,
  UNIQUE (stream, revision)
);
CREATE TABLE IF NOT EXISTS checkpoints (name text PRIMARY KEY, position bigint NOT NULL);`
  },
  {
    version: 2,
    name: 'read models',
    // The generation each projection is read and written in, their checkpoints, the relay's, and the projector's lease;
    // the collections' tables are made per generation by the read store (prepare, rebuild).
    sql: `
CREATE TABLE IF NOT EXISTS projection_generations (projection text PRIMARY KEY, gen integer NOT NULL, signature text NOT NULL, newest integer NOT NULL);
CREATE TABLE IF NOT EXISTS projection_checkpoints (name text PRIMARY KEY, position bigint NOT NULL);
CREATE TABLE IF NOT EXISTS consumer_checkpoints (name text PRIMARY KEY, position bigint NOT NULL);
CREATE TABLE IF NOT EXISTS projector_lease (id integer PRIMARY KEY CHECK (id = 1), holder text NOT NULL, expires_at bigint NOT NULL);`
  },
  {
    version: 3,
    name: 'kept files',
    // A blob is a version of chunks, named by its (owner, id) row.
    sql: `
CREATE TABLE IF NOT EXISTS blobs (owner text NOT NULL, id text NOT NULL, version text NOT NULL, bytes bigint NOT NULL, PRIMARY KEY (owner, id));
CREATE TABLE IF NOT EXISTS blob_chunks (version text NOT NULL, seq integer NOT NULL, data bytea NOT NULL, PRIMARY KEY (version, seq));`
  },
  {
    version: 4,
    name: 'held deliveries',
    // The in-process bus's deliveries that wait (asked again later, or given up), found again after a restart.
    sql: `
CREATE TABLE held_deliveries (
  consumer text NOT NULL,
  event_id text NOT NULL,
  stream text NOT NULL,
  revision integer NOT NULL,
  type text NOT NULL,
  due_at text NOT NULL,
  attempts integer NOT NULL,
  state text NOT NULL,
  last_error text,
  PRIMARY KEY (consumer, event_id)
);
CREATE INDEX held_deliveries_due ON held_deliveries (consumer, state, due_at COLLATE "C");`
  }
]

/**
 * Brings `schema` to the last migration: creates the schema and `schema_migrations` when
 * absent and runs the migrations it has not recorded, under a session advisory lock so that
 * processes starting at once run each exactly once (the others wait, then find it done).
 * Cost: one query for what is recorded, then the missing migrations alone.
 * @returns the versions this call applied (empty when the schema was up to date).
 * @throws what the server raised (StoreUnavailableError through a StorePool when unreachable).
 */
export async function migrate(pool: pg.Pool, schema: string): Promise<number[]> {
  const c = await pool.connect()
  try {
    await c.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    try {
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      await c.query(
        `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
      )
      const done = new Set((await c.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`)).rows.map(r => r.version))
      const applied: number[] = []
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue
        await c.query('BEGIN')
        try {
          await c.query(m.sql)
          await c.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name])
          await c.query('COMMIT')
        } catch (err) {
          await c.query('ROLLBACK').catch(() => {})
          throw err
        }
        applied.push(m.version)
      }
      return applied
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {})
    }
  } finally {
    c.release()
  }
}

const migrations = new WeakMap<pg.Pool, Promise<number[]>>()

/** `migrate` once per pool and schema for the stores sharing it (each awaits it before its first query); a failed run is tried again by the next caller. */
export function migrated(pool: pg.Pool, schema: string): Promise<number[]> {
  let p = migrations.get(pool)
  if (!p) {
    p = migrate(pool, schema)
    migrations.set(pool, p)
    p.catch(() => migrations.delete(pool))
  }
  return p
}
