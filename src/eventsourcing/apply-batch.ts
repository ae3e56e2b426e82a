import { createHash } from 'node:crypto'
import type { RecordedEvent } from '../ports/event-store.ts'
import type { CollectionSpec, Doc, ReadStore, WriteOp } from '../ports/read-store.ts'
import type { Projection, ProjectionWriter } from './projection.ts'
import type { KeyFilter } from './key-filter.ts'
import { turnIfDue } from '../lib/turns.ts'

// One batch of events applied to projections and committed with their checkpoints: what the
// live projector (runner.ts) and a rebuild (rebuild.ts) both do, page by page.

/** The signature of a projection's documents: its version and collection specs (a change starts a new generation). */
export function signatureOf(p: Projection): string {
  return createHash('sha256')
    .update(JSON.stringify({ version: p.version, collections: p.collections }))
    .digest('hex')
    .slice(0, 16)
}

/**
 * Freezes a document and everything in it (a projection's documents are values: `evolve`
 * returns a new one). @returns the same document.
 */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  Object.freeze(value)
  for (const v of Object.values(value)) deepFreeze(v)
  return value
}

/**
 * A batch's writer: read-through cache of documents, writes kept until the batch commits.
 * A document written several times in a batch is written once, its last version (the
 * writes of one key coalesce between two `deleteWhere`s, which keep their place).
 * Documents are handed out frozen and shared (no copy per read): a projection that
 * changed a document it read in place would throw (TypeError), rather than change what
 * later events of the batch read. `carried` seeds the cache with documents known to be
 * stored as they are (a rebuild's previous page). `written` (a rebuild's, whose documents
 * no one else writes) holds every key written so far: a key it does not hold is read as
 * absent without asking the store, and every key put is added to it.
 */
class BatchWriter implements ProjectionWriter {
  private readonly reads: ReadStore
  readonly cache: Map<string, Doc | null>
  /** `deleteWhere`s of this batch: a committed document they match reads as gone. */
  private readonly erased: Array<{ name: string; field: string; value: string }> = []
  readonly ops: WriteOp[] = []
  /** Where each key's latest put or delete is in `ops`, since the last `deleteWhere`. */
  private readonly slot = new Map<string, number>()
  private readonly written: KeyFilter | undefined
  constructor(reads: ReadStore, carried?: Map<string, Doc | null>, written?: KeyFilter) {
    this.reads = reads
    this.cache = carried ?? new Map()
    this.written = written
  }
  private key(spec: CollectionSpec, id: string): string {
    return `${spec.name}\u0000${id}`
  }
  get<T extends Doc>(spec: CollectionSpec, id: string): T | null | Promise<T | null> {
    const k = this.key(spec, id)
    // One lookup: the cache holds documents and null (known absent), never undefined.
    const cached = this.cache.get(k)
    if (cached !== undefined) return deepFreeze(cached) as T | null
    if (this.written !== undefined && !this.written.mayHold(k)) {
      this.cache.set(k, null)
      return null
    }
    return this.load<T>(spec, id, k)
  }
  /** A document read from the store (a `deleteWhere` of this batch that matches it hides it), then cached. */
  private async load<T extends Doc>(spec: CollectionSpec, id: string, k: string): Promise<T | null> {
    const stored = await this.reads.collection(spec).get(id)
    if (!this.cache.has(k)) this.cache.set(k, stored && this.erased.some(e => e.name === spec.name && stored[e.field] === e.value) ? null : stored)
    return deepFreeze(this.cache.get(k) ?? null) as T | null
  }
  private record(k: string, op: WriteOp): void {
    const at = this.slot.get(k)
    if (at !== undefined) {
      this.ops[at] = op
      return
    }
    this.slot.set(k, this.ops.length)
    this.ops.push(op)
  }
  put(spec: CollectionSpec, doc: Doc): void {
    const k = this.key(spec, doc._id)
    this.written?.add(k)
    this.cache.set(k, doc)
    this.record(k, { op: 'put', spec, doc })
  }
  delete(spec: CollectionSpec, id: string): void {
    const k = this.key(spec, id)
    this.cache.set(k, null)
    this.record(k, { op: 'delete', spec, id })
  }
  deleteWhere(spec: CollectionSpec, field: string, value: string): void {
    const prefix = `${spec.name}\u0000`
    for (const [k, doc] of this.cache) if (k.startsWith(prefix) && doc !== null && doc[field] === value) this.cache.set(k, null)
    this.erased.push({ name: spec.name, field, value })
    this.ops.push({ op: 'deleteWhere', spec, where: { [field]: value } })
    // Writes after it must stay after it.
    this.slot.clear()
  }

  /** Whether the batch erased documents by a condition (a cache carried past it could hold stale misses). */
  get erasing(): boolean {
    return this.erased.length > 0
  }
}

/** A committed batch: its documents cache, and whether it erased documents by a condition (`deleteWhere`). */
export interface AppliedBatch {
  readonly cache: Map<string, Doc | null>
  readonly erasing: boolean
}

/**
 * Applies `events` (global order) to each projection past its checkpoint, and writes the
 * documents with the checkpoints moved to `through` in one atomic write. `carried`: the
 * documents cache to start from; `written`: the keys written so far (both a rebuild's,
 * whose documents no one else writes; see BatchWriter).
 * @returns what the documents are now (the batch's cache) and whether it erased any by a condition.
 * @throws CheckpointConflictError when another process moved a checkpoint meanwhile.
 */
export async function applyBatch(
  reads: ReadStore,
  projections: readonly Projection[],
  checkpoints: Map<string, number>,
  events: readonly RecordedEvent[],
  through: number,
  carried?: Map<string, Doc | null>,
  written?: KeyFilter
): Promise<AppliedBatch> {
  const writer = new BatchWriter(reads, carried, written)
  // The checkpoints as this batch starts: the events it applies and the moves it commits
  // (compare-and-set from these) agree, even when the map is reloaded meanwhile (a lost lease).
  const folds = projections.map(p => ({ p, from: checkpoints.get(p.name) ?? 0, types: new Set(p.event_types) }))
  for (const event of events) {
    for (const { p, from, types } of folds) {
      if (from >= event.position || !types.has(event.type)) continue
      const applying = p.apply(event, writer)
      if (applying) await applying
    }
    // A part of a chunk folds 2,000 items: the loop's other work goes on between events (no microtask when no turn is due: a rebuild folds millions).
    const due = turnIfDue()
    if (due) await due
  }
  const moves = folds.filter(f => f.from < through).map(f => ({ projection: f.p.name, from: f.from, to: through }))
  if (moves.length === 0 && writer.ops.length === 0) return writer
  await reads.write(writer.ops, moves)
  for (const m of moves) checkpoints.set(m.projection, m.to)
  return writer
}
