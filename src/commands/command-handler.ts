import pRetry from 'p-retry'
import { WrongExpectedRevisionError, type EventMetadata, type EventStore, type NewEvent, type RecordedEvent } from '../ports/event-store.ts'
import type { Event } from '../domain/shared.ts'
import type { CommandContext } from './context.ts'
import { LRUCache } from 'lru-cache'

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

export interface Decider<S, E extends Event<string, unknown>, C> {
  initialState: () => S
  evolve: (state: S, event: E) => S
  decide: (command: C, state: S) => E[]
  snapshot?: Snapshotting<S, E>
}

/** A stream folded into state, as of `revision` (-1: no stream) and global `position`. */
export interface Loaded<S> {
  state: S
  revision: number
  position: number
  /** Events after the latest snapshot event (all of them when there is none). */
  since_snapshot: number
}

export interface HandleResult<S, E> {
  /** State after this command's events. */
  state: S
  /** What this command appended (`[]`: nothing to do). */
  events: E[]
  /** Global position of the append that carried the events, or of the stream's head when nothing was appended. */
  position: number
  /** Revision of this command's last event, or of the stream's head when nothing was appended. */
  revision: number
}

/**
 * Metadata of a worker's write: `correlation` (the job or batch the work is for) correlates
 * it, `causation` (the bus message or event that caused it) caused it, `actor` did it.
 */
export const workerMeta = (correlation: string, causation: string, actor = 'verifier'): Partial<EventMetadata> => ({
  actor,
  correlation_id: correlation,
  causation_id: causation
})

type Command<S, C> = C | ((state: S) => C)
type AnyDecider = Decider<any, Event<string, unknown>, any>

interface Pending {
  decider: AnyDecider
  command: Command<unknown, unknown>
  meta: Partial<EventMetadata>
  known?: Loaded<unknown>
  resolve: (r: HandleResult<unknown, Event<string, unknown>>) => void
  reject: (err: unknown) => void
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
type Cached = Loaded<unknown> & { evolve: AnyDecider['evolve']; weight?: (state: unknown) => number }

interface StoreState {
  queues: Map<string, Pending[]>
  cache: LRUCache<string, Cached>
}
const perStore = new WeakMap<EventStore, StoreState>()
function of(store: EventStore): StoreState {
  let s = perStore.get(store)
  if (!s) {
    s = {
      queues: new Map(),
      cache: new LRUCache({
        max: MAX_CACHED_STREAMS,
        maxSize: CACHE_BYTES,
        sizeCalculation: v => Math.max(1, Math.min(CACHE_BYTES, Math.round(v.weight?.(v.state) ?? 1024)))
      })
    }
    perStore.set(store, s)
  }
  return s
}

const fold = <S>(decider: AnyDecider, from: Loaded<S>, events: readonly RecordedEvent[]): Loaded<S> => {
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
async function readFresh<S>(store: EventStore, stream: string, decider: AnyDecider): Promise<Loaded<S>> {
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
async function current<S>(store: EventStore, stream: string, decider: AnyDecider): Promise<Loaded<S>> {
  const every = decider.snapshot?.every
  if (every === undefined) return await readFresh<S>(store, stream, decider)
  const { cache } = of(store)
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

function remember(store: EventStore, stream: string, decider: AnyDecider, loaded: Loaded<unknown>): void {
  if (decider.snapshot?.every === undefined) return
  const { cache } = of(store)
  const old = cache.get(stream)
  if (old && old.revision > loaded.revision && old.evolve === decider.evolve) return
  cache.set(stream, { ...loaded, evolve: decider.evolve, weight: decider.snapshot.weight })
}

/**
 * Folds a stream into state without deciding anything (bounded like `handle`).
 * @returns the state, its revision (-1 when the stream does not exist) and the global position of its last event (0 when none).
 */
export async function load<S, E extends Event<string, unknown>>(
  ctx: CommandContext,
  stream: string,
  decider: Pick<Decider<S, E, unknown>, 'initialState' | 'evolve' | 'snapshot'>
): Promise<Loaded<S>> {
  return await current<S>(ctx.store, stream, decider as unknown as AnyDecider)
}

/**
 * Runs a command on a stream (ARCHITECTURE.md "Write side"): folds the stream into state,
 * calls `decide`, and appends the events with the stream's revision as the expected
 * revision. `command` may be a function of the state.
 *
 * Commands on one stream are queued in each process and decided together: one fold, each
 * command decided on the state its predecessors left, one append for all of them (group
 * commit, at most `config.commands.batch_max`). A command that `decide` refuses fails
 * alone. When another process appended first, the whole group is decided again on the
 * new state, after a random pause (full jitter, growing), until `config.commands.deadline_ms`.
 * A decider with a snapshot interval gets its snapshot event in the same append when due.
 * With `known` (a state the caller has just loaded), the first attempt skips the read.
 * @throws DomainError from `decide`; WrongExpectedRevisionError when the stream stays
 *   contended past the deadline; the store's error when an append fails otherwise.
 */
export async function handle<S, E extends Event<string, unknown>, C>(
  ctx: CommandContext,
  stream: string,
  decider: Decider<S, E, C>,
  command: Command<S, C>,
  meta: Partial<EventMetadata> = {},
  options: { known?: Loaded<S> } = {}
): Promise<HandleResult<S, E>> {
  const { queues } = of(ctx.store)
  return await new Promise((resolve, reject) => {
    const queue = queues.get(stream)
    const item: Pending = {
      decider: decider as unknown as AnyDecider,
      command: command as Command<unknown, unknown>,
      meta,
      known: options.known,
      resolve: resolve as Pending['resolve'],
      reject
    }
    if (queue) {
      queue.push(item)
      return
    }
    queues.set(stream, [item])
    void drain(ctx, stream)
  })
}

async function drain(ctx: CommandContext, stream: string): Promise<void> {
  const { queues } = of(ctx.store)
  const queue = queues.get(stream)!
  while (queue.length > 0) {
    const first = queue[0]
    let n = 1
    const max = first.known ? 1 : ctx.config.commands.batch_max
    while (n < queue.length && n < max && queue[n].decider.evolve === first.decider.evolve && !queue[n].known) n++
    const batch = queue.splice(0, n)
    try {
      await commit(ctx, stream, batch)
    } catch (err) {
      for (const p of batch) p.reject(err)
    }
  }
  queues.delete(stream)
}

interface Outcome {
  ok: true
  events: Event<string, unknown>[]
  state: unknown
  count: number
}
type Decided = Outcome | { ok: false; error: unknown }

async function commit(ctx: CommandContext, stream: string, batch: Pending[]): Promise<void> {
  // One aggregate (one evolve); each command is decided by its own decider, the stream is
  // loaded and snapshotted by the one that knows its snapshots.
  const decider = batch.find(p => p.decider.snapshot !== undefined)?.decider ?? batch[0].decider
  let view: Loaded<unknown> = batch[0].known ?? (await current(ctx.store, stream, decider))
  let retry = false
  // Another process appended first: decide again on what it wrote, after a random pause
  // (p-retry: 4 ms doubling up to 1 s, randomized), until the command deadline.
  await pRetry(
    async () => {
      if (retry) view = await current(ctx.store, stream, decider)
      retry = true
      await decideAndAppend(ctx, stream, decider, batch, view)
    },
    {
      retries: Number.POSITIVE_INFINITY,
      maxRetryTime: ctx.config.commands.deadline_ms,
      minTimeout: 4,
      factor: 2,
      maxTimeout: 1_000,
      randomize: true,
      shouldRetry: ({ error }) => error instanceof WrongExpectedRevisionError
    }
  )
}

/** One attempt: decides the batch on `view`, appends at its revision (WrongExpectedRevisionError when another process appended first) and settles the batch. */
async function decideAndAppend(ctx: CommandContext, stream: string, decider: AnyDecider, batch: Pending[], view: Loaded<unknown>): Promise<void> {
  let state = view.state
  const decided: Decided[] = []
  const events: NewEvent[] = []
  const now = ctx.now().toISOString()
  for (const p of batch) {
    try {
      const cmd = typeof p.command === 'function' ? (p.command as (s: unknown) => unknown)(state) : p.command
      const own = p.decider.decide(cmd, state)
      for (const e of own) state = decider.evolve(state, e)
      const metadata: EventMetadata = {
        occurred_at: now,
        actor: p.meta.actor ?? null,
        correlation_id: p.meta.correlation_id ?? null,
        causation_id: p.meta.causation_id ?? null
      }
      for (const e of own) events.push({ id: ctx.newId(), type: e.type, data: e.data as Record<string, unknown>, metadata })
      decided.push({ ok: true, events: own, state, count: events.length })
    } catch (err) {
      decided.push({ ok: false, error: err })
    }
  }
  if (events.length === 0) {
    settle(batch, decided, view.position, view.revision)
    return
  }
  let since = view.since_snapshot + events.length
  const snap = decider.snapshot
  if (snap?.every !== undefined && snap.take && since >= snap.every) {
    const e = snap.take(state, now)
    events.push({
      id: ctx.newId(),
      type: e.type,
      data: e.data as Record<string, unknown>,
      metadata: { occurred_at: now, actor: null, correlation_id: null, causation_id: null }
    })
    since = 0
  }
  const r = await ctx.store.append(stream, events, { expected_revision: view.revision < 0 ? 'no_stream' : view.revision })
  remember(ctx.store, stream, decider, { state, revision: r.next_expected_revision, position: r.position, since_snapshot: since })
  settle(batch, decided, r.position, view.revision)
}

function settle(batch: Pending[], decided: Decided[], position: number, base: number): void {
  batch.forEach((p, i) => {
    const d = decided[i]
    if (!d.ok) {
      p.reject(d.error)
      return
    }
    p.resolve({ state: d.state, events: d.events, position, revision: base + d.count })
  })
}
