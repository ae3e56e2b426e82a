/**
 * Read store port: the document collections that projections write and query functions
 * read (docs/design/architecture.md "Read side"). Every query a route makes is served by an index: a
 * collection declares the fields queries filter or sort on and its compound indexes, and
 * queries are equality, any-of, ranges and prefixes on those fields, sorted on them, with
 * counts. Every adapter (SQLite, MongoDB) passes test/support/readstore-contract.ts.
 *
 * Writes come in batches from the projection runner: documents and the projections'
 * checkpoints commit together or not at all, and a batch commits only if the checkpoints
 * it started from are still the stored ones (compare-and-set), so each event is applied
 * exactly once however many processes project. Each projection's collections live in a
 * generation: a rebuild fills the next generation beside the live one, then makes it the
 * live one.
 */
export type Doc = Record<string, unknown> & { _id: string }

type FieldType = 'text' | 'number' | 'boolean'

export interface CollectionSpec {
  name: string
  /** The projection that writes it (its generation is that projection's). */
  projection: string
  /** Fields that queries filter or sort on, with their type (columns in SQLite, indexed paths in MongoDB). */
  fields: Readonly<Record<string, FieldType>>
  /** Compound indexes, fields ascending (a descending sort walks one backwards); `_id` is the last key of each. */
  indexes: ReadonlyArray<readonly string[]>
}

type Scalar = string | number | boolean | null

/** A condition on one field: equal, any of, a range (inclusive), or a text prefix. */
export type Condition = Scalar | { in: readonly Scalar[] } | { gte?: string | number; lte?: string | number } | { prefix: string }

export type Where = Readonly<Record<string, Condition>>

export interface Query {
  where?: Where
  /** Fields of the collection's spec, or `_id`; ties are broken by `_id` in the last field's direction. */
  sort?: ReadonlyArray<readonly [string, 1 | -1]>
  limit?: number
  offset?: number
  /**
   * Read through this index (one of the spec's `indexes`, by its fields): for a caller that
   * knows better than the planner, as a sorted page over a wide range does (walk the
   * sort's index and filter, rather than sort the range). @throws Error for an undeclared index.
   */
  use_index?: readonly string[]
}

export interface Collection<T extends Doc> {
  get(id: string): Promise<T | null>
  find(query?: Query): Promise<T[]>
  findOne(where: Where): Promise<T | null>
  count(where?: Where): Promise<number>
}

/** One write of a batch. */
export type WriteOp =
  | { op: 'put'; spec: CollectionSpec; doc: Doc }
  | { op: 'delete'; spec: CollectionSpec; id: string }
  /** Every document matching `where` (erasure of an account's documents). */
  | { op: 'deleteWhere'; spec: CollectionSpec; where: Where }

export interface ReadStore {
  collection<T extends Doc>(spec: CollectionSpec): Collection<T>
  /**
   * Applies `ops` and moves each named projection's checkpoint from `from` to `to`
   * (global positions), atomically.
   * @throws CheckpointConflictError when a checkpoint is not at `from` any more (another
   *   process projected meanwhile): nothing was written.
   */
  write(ops: readonly WriteOp[], checkpoints: ReadonlyArray<{ projection: string; from: number; to: number }>): Promise<void>
  /** Global position up to which a projection's live generation has applied events (0 when none). */
  getCheckpoint(projection: string): Promise<number>
  /**
   * Position a named consumer of the event log (the relay) has stored, 0 when none: kept
   * here so that it never becomes an event itself. Cost: one key lookup.
   */
  getConsumerCheckpoint(name: string): Promise<number>
  /** Stores a consumer's position (last write wins; the consumer is the only writer of its name). */
  setConsumerCheckpoint(name: string, position: number): Promise<void>
  /**
   * Takes or renews the projector lease for `holder` for `ttl_ms` (one process projects;
   * the others follow the checkpoints). @returns whether `holder` holds it now.
   */
  lease(holder: string, ttl_ms: number): Promise<boolean>
  /**
   * The live generation of a projection, made for `signature` (its collections' specs and
   * version): when the stored one was made for another signature, a new empty generation
   * becomes the live one (its checkpoint 0: the runner rebuilds it).
   */
  prepare(projection: string, signature: string, specs: readonly CollectionSpec[]): Promise<void>
  /** Rebuild beside the live generation: the next generation, empty, to fill (its own checkpoint, 0). */
  startRebuild(projection: string, specs: readonly CollectionSpec[]): Promise<RebuildTarget>
  /** Whether the store survives restarts. */
  readonly durable: boolean
  close(): Promise<void>
}

/** A generation being rebuilt beside the live one. */
export interface RebuildTarget {
  /** The store as the rebuild sees it: the projection's collections and checkpoint of the new generation. */
  readonly store: ReadStore
  /** Makes the rebuilt generation the live one (when the live one is still the one it replaces). @returns whether it switched. */
  activate(): Promise<boolean>
}

/** Another process moved a checkpoint since this batch started from it: nothing was written. */
export class CheckpointConflictError extends Error {
  constructor(projection: string, expected: number, actual: number) {
    super(`checkpoint of ${projection}: expected ${expected}, stored ${actual}`)
    this.name = 'CheckpointConflictError'
  }
}
