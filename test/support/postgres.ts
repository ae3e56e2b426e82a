// A database of the test's own on the local PostgreSQL server (POSTGRES_URL, default
// postgres://postgres@127.0.0.1:5432/postgres, trust auth), dropped at the test's end.
import type { Test } from 'tap'
import pg from 'pg'

/** The server the tests use: its maintenance database, where test databases are created. */
export const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** Whether the server answers a query within `ms`. */
export async function postgresAnswers(ms = 2_000): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: ms })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * Creates the database `svc_test_<name>_<pid>` (dropped first if a killed run left it) and
 * drops it at the end of `t` (closing what still holds it). @returns its URL.
 */
export async function testDatabase(t: Test, name: string): Promise<string> {
  const database = `svc_test_${name.replace(/[^a-z0-9_]/g, '_')}_${process.pid}`
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${database}`)
  } finally {
    await admin.end()
  }
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: POSTGRES_URL })
    await c.connect()
    await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await c.end()
  })
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${database}`
  return url.toString()
}

/**
 * A test file that needs PostgreSQL: true when it answers; otherwise the file plans 0 with
 * the reason (counted as skipped), or fails when REQUIRE_POSTGRES=1 (CI: never passed by skipping).
 */
export async function requirePostgres(t: Test): Promise<boolean> {
  if (await postgresAnswers()) return true
  if (process.env.REQUIRE_POSTGRES === '1') t.fail(`no PostgreSQL answers at ${POSTGRES_URL}, and REQUIRE_POSTGRES=1`)
  else t.plan(0, `no PostgreSQL answers at ${POSTGRES_URL} (set POSTGRES_URL; .ci/run starts one)`)
  return false
}
