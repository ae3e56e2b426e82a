import pRetry from 'p-retry'
import { WrongExpectedRevisionError, type EventMetadata, type EventStore, type NewEvent } from '../ports/event-store.ts'
import type { Event } from '../lib/event.ts'
import { current, remember, type Folding, type Loaded } from './stream-loader.ts'

export type { Loaded } from './stream-loader.ts'

/**
 * What the command handler needs of its caller's context: the event store, a clock, an id
 * source, and the group commit's bounds (`COMMAND_BATCH_MAX`, `COMMAND_DEADLINE_MS`). The
 * operations' `CommandContext` is one.
 */
export interface WriteContext {
  store: EventStore
  now: () => Date
  newId: () => string
  config: { commands: { batch_max: number; deadline_ms: number } }
}

/** A decider (docs/design/architecture.md "Write side"): the fold of its stream, and `decide`. */
export interface Decider<S, E extends Event<string, unknown>, C> extends Folding<S, E> {
  decide: (command: C, state: S) => E[]
}

export interface HandleResult<S, E> {
  /** State after this command's events. */
  state: S
  /** What this command appended (`[]`: nothing to do). */
  events: E[]
  /** The same events as stored: with their ids and metadata (a flow's inline reaction names its trigger by id). */
  recorded: NewEvent[]
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

/** Each store's queues of commands waiting for their stream (per store: tests open several in one process). */
const queuesByStore = new WeakMap<EventStore, Map<string, Pending[]>>()
function queuesOf(store: EventStore): Map<string, Pending[]> {
  let queues = queuesByStore.get(store)
  if (!queues) {
    queues = new Map()
    queuesByStore.set(store, queues)
  }
  return queues
}

/**
 * Folds a stream into state without deciding anything (bounded like `handle`).
 * @returns the state, its revision (-1 when the stream does not exist) and the global position of its last event (0 when none).
 */
export async function load<S, E extends Event<string, unknown>>(
  ctx: WriteContext,
  stream: string,
  decider: Pick<Decider<S, E, unknown>, 'initialState' | 'evolve' | 'snapshot'>
): Promise<Loaded<S>> {
  return await current<S>(ctx.store, stream, decider as unknown as AnyDecider)
}

/**
 * Runs a command on a stream (docs/design/architecture.md "Write side"): folds the stream into state,
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
  ctx: WriteContext,
  stream: string,
  decider: Decider<S, E, C>,
  command: Command<S, C>,
  meta: Partial<EventMetadata> = {},
  options: { known?: Loaded<S> } = {}
): Promise<HandleResult<S, E>> {
  const queues = queuesOf(ctx.store)
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

async function drain(ctx: WriteContext, stream: string): Promise<void> {
  const queues = queuesOf(ctx.store)
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
  recorded: NewEvent[]
  state: unknown
  count: number
}
type Decided = Outcome | { ok: false; error: unknown }

async function commit(ctx: WriteContext, stream: string, batch: Pending[]): Promise<void> {
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
async function decideAndAppend(ctx: WriteContext, stream: string, decider: AnyDecider, batch: Pending[], view: Loaded<unknown>): Promise<void> {
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
      const recorded: NewEvent[] = own.map(e => ({ id: ctx.newId(), type: e.type, data: e.data as Record<string, unknown>, metadata }))
      events.push(...recorded)
      decided.push({ ok: true, events: own, recorded, state, count: events.length })
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
    p.resolve({ state: d.state, events: d.events, recorded: d.recorded, position, revision: base + d.count })
  })
}
