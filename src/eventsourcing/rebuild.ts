import type { EventStore } from '../ports/event-store.ts'
import type { CollectionSpec, Doc, ReadStore, WriteOp } from '../ports/read-store.ts'
import type { Projection } from './projection.ts'
import { applyBatch, signatureOf } from './apply-batch.ts'
import { KeyFilter } from './key-filter.ts'

/** Events read and applied per batch of a rebuild (one commit each), and their data's characters at most. */
const REBUILD_PAGE = 20_000
const REBUILD_BYTES = 16 * 1024 * 1024

/** Documents a rebuild keeps from one page to the next (the most recently cached). */
const REBUILD_CARRY = 10_000

/**
 * How a rebuild runs: `onProgress(events, total)` after each page (the events read, and the
 * events of the log: counted at the start, or those read when more came since), `page` events a page (REBUILD_PAGE) and `carry` documents carried to
 * the next page (REBUILD_CARRY); tests set both small for many pages over a short history.
 */
export interface RebuildOptions {
  onProgress?: (events: number, total: number) => void
  page?: number
  carry?: number
}

/**
 * Rebuilds projections beside their live generations (`svc projections rebuild`): every
 * event from the first into a new generation, page by page, then makes it the live one
 * once caught up with the store (the live projector goes on from the new generation's
 * checkpoint). The new generation gets its secondary indexes when it is complete (the
 * adapter's `activate`). Cost: every event once, in pages of REBUILD_PAGE, each page one
 * commit per projection; a document is read from the store only when it was written in an
 * earlier page and not carried (a KeyFilter of the keys written tells the new ones apart);
 * memory: one page, its documents, the REBUILD_CARRY documents cached last (the next page
 * reads them without the store) and the KeyFilter (at most 16 MiB). Measured in
 * `bench/read-side.ts`. `options`: progress, page size and documents carried (RebuildOptions).
 * @returns events read and whether each projection switched.
 */
export async function rebuildProjections(
  store: EventStore,
  reads: ReadStore,
  projections: readonly Projection[],
  options: RebuildOptions = {}
): Promise<{ events: number; switched: Record<string, boolean> }> {
  for (const p of projections) await reads.prepare(p.name, signatureOf(p), p.collections)
  const targets = await Promise.all(projections.map(async p => ({ p, target: await reads.startRebuild(p.name, p.collections) })))
  // One view over every new generation: each target pins its projection.
  const pinned: Record<string, ReadStore> = Object.fromEntries(targets.map(({ p, target }) => [p.name, target.store]))
  const views = Object.values(pinned)
  const store0 = views.length === 1 ? views[0] : new CompositeStore(pinned)
  const events = await foldHistory(store, store0, projections, options)
  const switched: Record<string, boolean> = {}
  for (const { p, target } of targets) switched[p.name] = await target.activate()
  return { events, switched }
}

/** Events that size the key filter at its largest: 2^23 events make 2^24 expected keys, 2^27 bits at 8 a key. */
const KEY_FILTER_EVENTS = 2 ** 23

/**
 * The page loop of a rebuild: every event from the first, REBUILD_PAGE at a time, applied to
 * `projections` from checkpoint 0 and written into `target` (one commit a page), carrying the
 * last documents written to the next page (see `rebuildProjections`: its costs and bounds).
 * bench/read-side.ts runs it into a store that keeps nothing to time the folds alone. The
 * events are counted first (`countAfter`: one query on SQLite and PostgreSQL, one read of
 * the log on KurrentDB, whose positions are not counts).
 * @returns the events read.
 */
export async function foldHistory(store: EventStore, target: ReadStore, projections: readonly Projection[], options: RebuildOptions = {}): Promise<number> {
  const pageSize = options.page ?? REBUILD_PAGE
  const carry = options.carry ?? REBUILD_CARRY
  const onProgress = options.onProgress ?? (() => {})
  const checkpoints = new Map(projections.map(p => [p.name, 0]))
  const types = new Set(projections.flatMap(p => p.event_types))
  let position = 0
  let events = 0
  // Documents of the last pages, as written (only the rebuild writes the new generation):
  // a document touched again in the next page is not read back.
  let carried = new Map<string, Doc | null>()
  // Counted, never a position (KurrentDB's positions are byte offsets): one query where positions are counts.
  const total = await store.countAfter(0, Number.MAX_SAFE_INTEGER)
  // Sized for the documents of a history this long: a job's four events make about five.
  const written = new KeyFilter(2 * Math.min(total, KEY_FILTER_EVENTS))
  for (;;) {
    const page = await store.readAll({ from_position: position, max_count: pageSize, max_bytes: REBUILD_BYTES })
    if (page.length === 0) break
    events += page.length
    position = page[page.length - 1].position
    const writer = await applyBatch(
      target,
      projections,
      checkpoints,
      page.filter(e => types.has(e.type)),
      position,
      carried,
      written
    )
    carried = writer.erasing ? new Map() : writer.cache
    for (const k of carried.keys()) {
      if (carried.size <= carry) break
      carried.delete(k)
    }
    onProgress(events, Math.max(total, events))
  }
  return events
}

/** A store that sends each projection's collections and checkpoints to the view that pins it (several rebuilds at once). */
class CompositeStore implements ReadStore {
  readonly durable = true
  private readonly views: Record<string, ReadStore>
  constructor(views: Record<string, ReadStore>) {
    this.views = views
  }
  private of(projection: string): ReadStore {
    return this.views[projection]
  }
  collection<T extends Doc>(spec: CollectionSpec) {
    return this.of(spec.projection).collection<T>(spec)
  }
  async write(ops: readonly WriteOp[], checkpoints: ReadonlyArray<{ projection: string; from: number; to: number }>): Promise<void> {
    // The views share one file and connection: each projection's part is written with its own checkpoint.
    for (const c of checkpoints)
      await this.of(c.projection).write(
        ops.filter(o => o.spec.projection === c.projection),
        [c]
      )
  }
  async getCheckpoint(projection: string) {
    return await this.of(projection).getCheckpoint(projection)
  }
  async getConsumerCheckpoint(): Promise<number> {
    throw new Error('a rebuild view keeps no consumer checkpoints')
  }
  async setConsumerCheckpoint(): Promise<void> {
    throw new Error('a rebuild view keeps no consumer checkpoints')
  }
  async lease(): Promise<boolean> {
    return false
  }
  async prepare(): Promise<void> {
    throw new Error('a rebuild view prepares nothing')
  }
  async startRebuild(): Promise<never> {
    throw new Error('a rebuild view rebuilds nothing')
  }
  async close(): Promise<void> {}
}
