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

/** How long a writer waits for another connection's write lock before it gives up (ms): SQLite's busy timeout of the stores. */
export const WRITE_LOCK_WAIT_MS = 10_000

const isBusy = (err: unknown): boolean => /SQLITE_BUSY|database is locked/i.test(String((err as { code?: unknown })?.code ?? '') + String(err))

/**
 * Takes `db`'s write lock (`BEGIN IMMEDIATE`) without blocking the event loop: an attempt
 * that finds another connection (another process) holding it answers busy at once (busy
 * timeout 0 for that statement), and the next attempt comes after a timer (1, 2, then
 * every 4 ms, jittered: short, so that a writer that keeps committing does not starve
 * this one), until `wait_ms`. SQLite's own busy handler sleeps inside the call, which
 * stops the whole process for as long as the other writer holds the lock.
 * @returns true with a transaction begun (the caller commits or rolls back), false when
 *   `wait_ms` passed without the lock. @throws SQLite's other errors.
 */
export async function beginImmediate(db: DatabaseSync, wait_ms = WRITE_LOCK_WAIT_MS): Promise<boolean> {
  const until = Date.now() + wait_ms
  let pause = 1
  for (;;) {
    db.exec('PRAGMA busy_timeout = 0')
    try {
      db.exec('BEGIN IMMEDIATE')
      return true
    } catch (err) {
      if (!isBusy(err)) throw err
    } finally {
      db.exec(`PRAGMA busy_timeout = ${WRITE_LOCK_WAIT_MS}`)
    }
    if (Date.now() >= until) return false
    await new Promise(resolve => setTimeout(resolve, pause * (0.5 + Math.random())))
    pause = Math.min(pause * 2, 4)
  }
}
