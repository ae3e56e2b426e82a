import { LRUCache } from 'lru-cache'
import type { EventStore, RecordedEvent } from '../ports/event-store.ts'
import type { Event } from '../lib/event.ts'

// A stream read into state for the command handler (command-handler.ts): backwards to its
// latest snapshot event, or from this process's cache of long-lived streams plus what was
// appended since. What is read is bounded by the snapshot interval, never by the history.

/**
 * In-stream snapshots: events that carry an aggregate's whole state forward (the wallet's
 * books closed, a user's state summarised). Loading a stream reads backwards only as far
 * as the latest of them, so a command's cost is bounded by `every` plus one append's
 * events, never by the stream's history; the full history stays in the stream, replayable.
 */
interface Snapshotting<S, E extends Event<string, unknown>> {
  /** Event types from which `evolve` rebuilds the whole state, whatever came before. */
  types: readonly string[]
  /**
   * With `take`: after this many events without one, `handle` appends `take(state, now)`
   * in the same append as the command's events.
   */
  every?: number
  take?: (state: S, now: string) => E
  /**
   * Approximate bytes the state holds (default 1 KiB): the per-process cache of states is
   * bounded by their sum (CACHE_BYTES) as well as by their number, so a few large states
   * (a million-address batch's de-duplication index) cannot fill the heap.
   */
  weight?: (state: S) => number
}

/** What folds a stream into state: a decider without its `decide`. */
export interface Folding<S, E extends Event<string, unknown>> {
  initialState: () => S
  evolve: (state: S, event: E) => S
  snapshot?: Snapshotting<S, E>
}

type AnyFolding = Folding<any, Event<string, unknown>>

/** A stream folded into state, as of `revision` (-1: no stream) and global `position`. */
export interface Loaded<S> {
  state: S
  revision: number
  position: number
  /** Events after the latest snapshot event (all of them when there is none). */
  since_snapshot: number
}

/** Events read per page when loading backwards to a snapshot. */
const PAGE = 256
/** Long-lived streams whose state is kept between commands in each process. */
const MAX_CACHED_STREAMS = 4_096
/** Bytes of cached states at most (their `weight`), least recently used dropped first. */
const CACHE_BYTES = 96 * 1024 * 1024
/** Events per page when a stream without snapshot events is folded forwards (large events, such as batch parts, stay few in memory). */
const FOLD_PAGE = 16

/** A cached state with the decider that folds it and its weight function. */
type Cached = Loaded<unknown> & { evolve: AnyFolding['evolve']; weight?: (state: unknown) => number }

/** Each store's cache of long-lived streams' states (per store: tests open several in one process). */
const caches = new WeakMap<EventStore, LRUCache<string, Cached>>()
function cacheOf(store: EventStore): LRUCache<string, Cached> {
  let cache = caches.get(store)
  if (!cache) {
    cache = new LRUCache({
      max: MAX_CACHED_STREAMS,
      maxSize: CACHE_BYTES,
      sizeCalculation: v => Math.max(1, Math.min(CACHE_BYTES, Math.round(v.weight?.(v.state) ?? 1024)))
    })
    caches.set(store, cache)
  }
  return cache
}

const fold = <S>(decider: AnyFolding, from: Loaded<S>, events: readonly RecordedEvent[]): Loaded<S> => {
  let { state, since_snapshot: since } = from
  const types = decider.snapshot?.types
  for (const e of events) {
    state = decider.evolve(state, { type: e.type, data: e.data }) as S
    since = types?.includes(e.type) ? 0 : since + 1
  }
  const last = events[events.length - 1]
  return last ? { state, revision: last.revision, position: last.position, since_snapshot: since } : from
}

/**
 * Reads a stream into state at a cost bounded by its snapshot interval: backwards, page by
 * page, down to its latest snapshot event, then folds forwards. Streams without snapshots
 * (jobs, deliveries: short by construction) are read whole; long-lived streams without
 * snapshot events (batches: bounded by the plan's `max_batch_size`) are folded forwards
 * page by page, FOLD_PAGE events in memory at a time.
 */
async function readFresh<S>(store: EventStore, stream: string, decider: AnyFolding): Promise<Loaded<S>> {
  const empty: Loaded<S> = { state: decider.initialState() as S, revision: -1, position: 0, since_snapshot: 0 }
  const types = decider.snapshot?.types
  if (!types) return fold(decider, empty, await store.readStream(stream))
  if (types.length === 0) {
    let loaded = empty
    for (;;) {
      const page = await store.readStream(stream, { from_revision: loaded.revision + 1, max_count: FOLD_PAGE })
      loaded = fold(decider, loaded, page)
      if (page.length < FOLD_PAGE) return loaded
    }
  }
  const page = Math.min(PAGE, decider.snapshot?.every ?? 1)
  const tail: RecordedEvent[] = []
  let from: number | undefined
  for (;;) {
    const batch = await store.readStream(stream, { direction: 'backwards', max_count: page, ...(from !== undefined && { from_revision: from }) })
    let found = false
    for (const e of batch) {
      tail.push(e)
      if (types.includes(e.type)) {
        found = true
        break
      }
    }
    if (found || batch.length < page) break
    from = batch[batch.length - 1].revision - 1
    if (from < 0) break
  }
  return fold(decider, empty, tail.reverse())
}

/**
 * The state of a stream now: long-lived streams (deciders with a snapshot interval) from
 * this process's cache plus the events appended since (by any process), others read
 * afresh. Bounded either way: a cache further behind than two snapshot intervals is
 * dropped for a fresh read.
 */
export async function current<S>(store: EventStore, stream: string, decider: AnyFolding): Promise<Loaded<S>> {
  const every = decider.snapshot?.every
  if (every === undefined) return await readFresh<S>(store, stream, decider)
  const cache = cacheOf(store)
  const hit = cache.get(stream)
  let loaded: Loaded<S> | null = null
  if (hit && hit.evolve === decider.evolve) {
    const limit = 2 * every
    const newer = await store.readStream(stream, { from_revision: hit.revision + 1, max_count: limit })
    if (newer.length < limit) loaded = fold(decider, hit as Loaded<S>, newer)
  }
  loaded ??= await readFresh<S>(store, stream, decider)
  remember(store, stream, decider, loaded)
  return loaded
}

export function remember(store: EventStore, stream: string, decider: AnyFolding, loaded: Loaded<unknown>): void {
  if (decider.snapshot?.every === undefined) return
  const cache = cacheOf(store)
  const old = cache.get(stream)
  if (old && old.revision > loaded.revision && old.evolve === decider.evolve) return
  cache.set(stream, { ...loaded, evolve: decider.evolve, weight: decider.snapshot.weight })
}
