import type { Command } from 'commander'
import { loadConfig, usage } from './common.ts'

/**
 * `svc db migrate`: brings the PostgreSQL schema of DATABASE_URL to the last migration
 * (what every process also does at start, under the same lock: safe beside running
 * processes and several at once) and prints `{ applied, version }` as JSON: the versions
 * this run applied (empty when it was up to date) and the last one. Exit 1 when the
 * server does not answer or refuses; 2 without DATABASE_URL (the embedded default makes
 * its SQLite files at start).
 */
export function registerDb(program: Command): void {
  const db = program.command('db').description('operator commands on the PostgreSQL database (DATABASE_URL)')
  db.command('migrate')
    .description('create or migrate the schema of DATABASE_URL to the last version (also done at every start); prints what it applied')
    .action(async () => {
      const config = await loadConfig()
      if (!config.database) usage('DATABASE_URL is not set: the embedded default (SQLite) makes its files at start')
      const { StorePool } = await import('../infra/postgres/pool.ts')
      const { migrate, MIGRATIONS } = await import('../infra/postgres/schema.ts')
      const pool = new StorePool(config.database.url, { max: 1, schema: 'public' })
      try {
        const applied = await migrate(pool, 'public')
        console.log(JSON.stringify({ applied, version: MIGRATIONS[MIGRATIONS.length - 1].version }))
      } finally {
        await pool.end()
      }
    })
}
