/**
 * Read store port: document collections that projections write and queries read.
 * Queries are equality filters plus sort and pagination, so they map onto MongoDB
 * (indexed fields) as well as onto the in-memory adapter.
 */
export type Doc = Record<string, unknown> & { _id: string }

export interface FindOptions {
  /** Field → 1 (ascending) or -1 (descending); ties broken by `_id` in the same direction. */
  sort?: Record<string, 1 | -1>
  limit?: number
  offset?: number
}

export interface Collection<T extends Doc> {
  get (id: string): Promise<T | null>
  /** Inserts or replaces the document with `doc._id`. */
  put (doc: T): Promise<void>
  delete (id: string): Promise<void>
  /** Documents whose fields equal every value in `filter`; arrays in `filter` mean "any of". */
  find (filter: Partial<Record<keyof T & string, unknown>>, options?: FindOptions): Promise<{ items: T[], total: number }>
  findOne (filter: Partial<Record<keyof T & string, unknown>>): Promise<T | null>
}

export interface ReadStore {
  collection<T extends Doc> (name: string): Collection<T>
  /** Global position up to which a projection has applied events (0 when none). */
  getCheckpoint (projection: string): Promise<number>
  setCheckpoint (projection: string, position: number): Promise<void>
  /** Whether the store survives restarts (false: rebuilt from the event store at start). */
  readonly durable: boolean
  close (): Promise<void>
}
