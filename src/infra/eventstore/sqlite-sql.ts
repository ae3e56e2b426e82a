import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { RecordedEvent } from '../../ports/event-store.ts'

// The SQLite event store's schema, its rows and the statements it prepares once per connection.

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position  INTEGER PRIMARY KEY AUTOINCREMENT,
  id        TEXT NOT NULL UNIQUE,
  stream    TEXT NOT NULL,
  revision  INTEGER NOT NULL,
  type      TEXT NOT NULL,
  data      TEXT NOT NULL,
  metadata  TEXT NOT NULL,
  UNIQUE (stream, revision)
);
CREATE TABLE IF NOT EXISTS checkpoints (
  name      TEXT PRIMARY KEY,
  position  INTEGER NOT NULL
);
`

export interface Row {
  position: number
  id: string
  stream: string
  revision: number
  type: string
  data: string
  metadata: string
}

export function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.id,
    stream: row.stream,
    revision: Number(row.revision),
    position: Number(row.position),
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    size: row.data.length
  }
}

/** The statements of one connection, prepared once. */
export interface Statements {
  head: StatementSync
  streamRev: StatementSync
  insert: StatementSync
  readStream: StatementSync
  readForwards: StatementSync
  readBackwards: StatementSync
  readAll: StatementSync
  dataVersion: StatementSync
  getCp: StatementSync
  setCp: StatementSync
}

/** The event store's statements on `db` (its schema made). */
export function prepareStatements(db: DatabaseSync): Statements {
  return {
    head: db.prepare('SELECT COALESCE(MAX(position), 0) AS p FROM events'),
    streamRev: db.prepare('SELECT COALESCE(MAX(revision), -1) AS r FROM events WHERE stream = ?'),
    insert: db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)'),
    readStream: db.prepare('SELECT * FROM events WHERE stream = ? ORDER BY revision'),
    // Both served by the UNIQUE (stream, revision) index: cost is the slice, not the stream.
    readForwards: db.prepare('SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?'),
    readBackwards: db.prepare('SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?'),
    // A page of at most LIMIT events, stepped one row at a time (`page` stops at a byte budget).
    readAll: db.prepare('SELECT position, id, stream, revision, type, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT ?'),
    dataVersion: db.prepare('PRAGMA data_version'),
    getCp: db.prepare('SELECT position FROM checkpoints WHERE name = ?'),
    setCp: db.prepare('INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position')
  }
}
