import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs'

/** Files that hold customer data or secrets: read and written by the service's user alone. */
export const PRIVATE_FILE_MODE = 0o600
/** Directories that hold them. */
const PRIVATE_DIR_MODE = 0o700

/**
 * Creates `dir` and its missing parents 0700 (an existing directory keeps the mode its
 * operator gave it; the files inside are 0600 whatever it is).
 */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
}

/**
 * Readies the SQLite database `file` before it is opened: created empty and 0600 when it is
 * missing (SQLite takes an empty file for a new database), else its group and other bits
 * taken off, and off its `-wal`, `-shm` and `-journal` left by an earlier run. SQLite gives
 * the `-wal`, `-shm` and `-journal` it creates the database file's own mode (measured with
 * node:sqlite: a database created 0600 gets a 0600 WAL and shared memory under umask 022,
 * while a chmod after opening leaves the WAL it has already made 0644), so they are private
 * too. `:memory:` and `''` (temporary databases) are left alone.
 */
export function preparePrivateDatabase(file: string): void {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return
  if (statSync(file, { throwIfNoEntry: false }) === undefined) {
    try {
      closeSync(openSync(file, 'wx', PRIVATE_FILE_MODE))
    } catch (err) {
      // Another process created it meanwhile: tightened below like any existing file.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    const s = statSync(f, { throwIfNoEntry: false })
    if (s !== undefined && (s.mode & 0o077) !== 0) chmodSync(f, PRIVATE_FILE_MODE)
  }
}
