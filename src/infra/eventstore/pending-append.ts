import type { AppendResult, ExpectedRevision } from '../../ports/event-store.ts'

/** An append waiting for its group's commit (the SQLite and PostgreSQL stores' group commit). */
export interface PendingAppend {
  stream: string
  /** The events as they are stored: their data and metadata serialized before the group's transaction. */
  events: ReadonlyArray<{ id: string; type: string; data: string; metadata: string }>
  expected: ExpectedRevision
  resolve: (r: AppendResult) => void
  reject: (err: unknown) => void
}
