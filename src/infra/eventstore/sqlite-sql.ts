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
CREATE TABLE IF NOT EXISTS held_deliveries (
  consumer   TEXT NOT NULL,
  event_id   TEXT NOT NULL,
  stream     TEXT NOT NULL,
  revision   INTEGER NOT NULL,
  type       TEXT NOT NULL,
  due_at     TEXT NOT NULL,
  attempts   INTEGER NOT NULL,
  state      TEXT NOT NULL,
  last_error TEXT,
  PRIMARY KEY (consumer, event_id)
);
CREATE INDEX IF NOT EXISTS held_deliveries_due ON held_deliveries (consumer, state, due_at);
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
  hold: StatementSync
  unhold: StatementSync
  held: StatementSync
  heldSummary: StatementSync
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
    setCp: db.prepare('INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position'),
    hold: db.prepare(
      'INSERT INTO held_deliveries (consumer, event_id, stream, revision, type, due_at, attempts, state, last_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (consumer, event_id) DO UPDATE SET due_at = excluded.due_at, attempts = excluded.attempts, state = excluded.state, last_error = excluded.last_error'
    ),
    unhold: db.prepare('DELETE FROM held_deliveries WHERE consumer = ? AND event_id = ?'),
    held: db.prepare('SELECT * FROM held_deliveries WHERE consumer = ? AND state = ? ORDER BY due_at'),
    heldSummary: db.prepare('SELECT consumer, state, COUNT(*) AS count, MIN(due_at) AS oldest_due_at FROM held_deliveries GROUP BY consumer, state')
  }
}
