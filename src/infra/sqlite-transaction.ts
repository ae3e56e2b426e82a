import type { DatabaseSync } from 'node:sqlite'

/**
 * Runs `fn` in one write transaction of `db` (`BEGIN IMMEDIATE`: the write lock is taken
 * first, other connections' writers wait up to the busy timeout) and commits it; on any
 * error it rolls back (where SQLite has not already) and rethrows.
 * @returns what `fn` returned. @throws `fn`'s error, or SQLite's (busy, full disk).
 */
export function immediateTransaction<R>(db: DatabaseSync, fn: () => R): R {
  db.exec('BEGIN IMMEDIATE')
  try {
    const r = fn()
    db.exec('COMMIT')
    return r
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK')
    throw err
  }
}
