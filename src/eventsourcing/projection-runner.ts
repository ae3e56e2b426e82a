import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { EventStore, RecordedEvent, Subscription } from '../ports/event-store.ts'
import { CheckpointConflictError, type ReadStore } from '../ports/read-store.ts'
import type { Projection } from './projection.ts'
import { applyBatch, signatureOf } from './apply-batch.ts'

export interface RunnerOptions {
  /** Events applied and committed together, at most. */
  batch?: number
  /** The projector lease's lifetime (ms): another process takes over this long after this one stops renewing. */
  lease_ms?: number
  /** How long `start` waits without the projections moving before it gives up (ms). */
  stall_ms?: number
}

/**
 * Runs projections into a durable read store, resuming from their checkpoints (no replay
 * at start). One process projects at a time (the lease); the others follow the stored
 * checkpoints, so `waitFor` (read-your-writes) works in every process. The projector reads
 * events through a catch-up then live subscription from the lowest checkpoint and commits
 * them in batches (up to `batch` events, or what has arrived when the loop is idle) with
 * the checkpoints (or BATCH_BYTES of event data), by compare-and-set: after a conflict (another projector, a rebuild
 * switching generations) it re-reads the checkpoints and goes on from there. Start-up cost
 * is bounded by the events not yet applied, memory by one batch.
 */
export class ProjectionRunner {
  private readonly store: EventStore
  private readonly reads: ReadStore
  private readonly projections: readonly Projection[]
  private readonly batchSize: number
  private readonly leaseMs: number
  private readonly stallMs: number
  private readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly checkpoints = new Map<string, number>()
  private buffer: RecordedEvent[] = []
  /** Characters of data buffered (events' `size`): a batch is committed at BATCH_BYTES too. */
  private bufferBytes = 0
  private seen = 0
  private flushing: Promise<void> | null = null
  private scheduled = false
  private sub: Subscription | null = null
  /** The subscription being followed (its callbacks' token), or null. */
  private current: object | null = null
  private leader = false
  private timer: NodeJS.Timeout | null = null
  private stopped = false
  private caughtUp = false
  private failure: unknown = null
  private failedAt = 0
  private waiters: Array<{ position: number; resolve: () => void }> = []
  private readonly appliedListeners: Array<(events: readonly RecordedEvent[]) => void> = []
  private readonly advanceListeners: Array<(position: number) => void> = []
  /** Lowest checkpoint over the projections (global position). */
  position = 0

  constructor(store: EventStore, projections: readonly Projection[], reads: ReadStore, options: RunnerOptions = {}) {
    this.store = store
    this.projections = projections
    this.reads = reads
    this.batchSize = options.batch ?? 1_000
    this.leaseMs = options.lease_ms ?? 10_000
    this.stallMs = options.stall_ms ?? 60_000
  }

  /**
   * Prepares each projection's generation and starts; resolves once caught up with the
   * store (as leader or follower), however long that takes while the projections move (a
   * projection changed on a long history is replayed from the first event at start).
   * @throws Error when they have not moved for `stall_ms` (another process holds the lease
   * and projects nothing, or every batch fails).
   */
  async start(): Promise<void> {
    for (const p of this.projections) await this.reads.prepare(p.name, signatureOf(p), p.collections)
    await this.reloadCheckpoints()
    await this.tick()
    this.timer = setInterval(
      () => {
        void this.tick()
      },
      Math.max(20, Math.min(250, this.leaseMs / 40))
    )
    const head = await this.store.headPosition()
    let moved = { position: this.position, at: Date.now() }
    while (!(await this.waitFor(head, Math.min(1_000, this.stallMs)))) {
      if (this.position > moved.position) moved = { position: this.position, at: Date.now() }
      else if (Date.now() - moved.at >= this.stallMs)
        throw new Error(`projections did not reach position ${head}: at ${this.position}, not moving for ${this.stallMs} ms`)
    }
    this.caughtUp = true
  }

  private async reloadCheckpoints(): Promise<void> {
    for (const p of this.projections) this.checkpoints.set(p.name, await this.reads.getCheckpoint(p.name))
    this.advance()
  }

  /**
   * Calls `listener` with the events of each batch this process committed to the read
   * models (as leader), right after the commit: their documents are readable then.
   */
  onApplied(listener: (events: readonly RecordedEvent[]) => void): void {
    this.appliedListeners.push(listener)
  }

  /** Calls `listener` each time the checkpoints move (as leader or follower), with the new position. */
  onAdvance(listener: (position: number) => void): void {
    this.advanceListeners.push(listener)
  }

  /** Whether this process projects (holds the lease); otherwise it follows the stored checkpoints. */
  get leading(): boolean {
    return this.leader
  }

  private advance(): void {
    const before = this.position
    this.position = Math.min(...this.projections.map(p => this.checkpoints.get(p.name) ?? 0))
    if (this.position > before) for (const listener of this.advanceListeners) listener(this.position)
    if (this.waiters.length === 0) return
    const due = this.waiters.filter(w => w.position <= this.position)
    this.waiters = this.waiters.filter(w => w.position > this.position)
    for (const w of due) w.resolve()
  }

  /** Renews the lease (or tries to take it) every `lease_ms / 40`, and follows the checkpoints when not leading. */
  private ticking = false
  private lastRenewal = 0
  private async tick(): Promise<void> {
    if (this.ticking || this.stopped) return
    this.ticking = true
    try {
      const now = Date.now()
      if (!this.leader || now - this.lastRenewal > this.leaseMs / 3) {
        const held = await this.reads.lease(this.holder, this.leaseMs)
        this.lastRenewal = now
        if (held && !this.leader) {
          this.leader = true
          await this.reloadCheckpoints()
          this.subscribe()
        }
        if (!held && this.leader) {
          this.leader = false
          await this.unsubscribe()
        }
      }
      if (!this.leader) await this.reloadCheckpoints()
      if (this.leader && this.sub === null && this.failure !== null && now - this.failedAt >= RETRY_MS) {
        await this.reloadCheckpoints()
        this.failure = null
        this.subscribe()
      }
    } catch (err) {
      this.failure = err
    } finally {
      this.ticking = false
    }
  }

  /**
   * Subscribes from the lowest checkpoint. Whatever an ended subscription still delivers
   * (its handler finishing an event, the checkpoint after it, its error) is ignored: a
   * checkpoint past events whose batch failed would otherwise commit them as applied.
   */
  private subscribe(): void {
    const types = [...new Set(this.projections.flatMap(p => p.event_types))]
    const token = {}
    this.current = token
    this.seen = this.position
    this.sub = this.store.subscribeToAll(
      {
        from_position: this.position,
        event_types: types,
        on_checkpoint: position => {
          if (this.current !== token) return
          this.seen = position
          this.schedule()
        }
      },
      async event => {
        if (this.current !== token) return
        this.buffer.push(event)
        this.bufferBytes += event.size ?? 0
        if (this.buffer.length >= this.batchSize || this.bufferBytes >= BATCH_BYTES) await this.flush()
      },
      err => {
        if (this.current !== token) return
        this.failure = err
        this.failedAt = Date.now()
        this.detach()
      }
    )
  }

  /** Forgets what a subscription delivered and did not commit: the next one starts from the checkpoints. */
  private forget(): void {
    this.current = null
    this.buffer = []
    this.bufferBytes = 0
    this.seen = this.position
  }

  /** Old subscriptions still winding down (awaited by `stop`). */
  private stopping: Array<Promise<void>> = []

  private async unsubscribe(): Promise<void> {
    const sub = this.sub
    this.sub = null
    this.forget()
    await sub?.stop()
  }

  /**
   * Ends the subscription without waiting for it: for a flush that may run inside the
   * subscription's own handler (its `stop` waits for that handler, which waits for the
   * flush). The old loop delivers nothing more: it checks its stop flag before each event.
   */
  private detach(): void {
    const sub = this.sub
    this.sub = null
    this.forget()
    if (sub) this.stopping.push(sub.stop().catch(() => undefined))
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      void this.flush()
    })
  }

  /** Commits what the subscription delivered; on a conflict, starts again from the stored checkpoints. */
  private async flush(): Promise<void> {
    while (this.flushing) await this.flushing
    if (this.buffer.length === 0 && this.seen <= this.position) return
    const events = this.buffer
    const through = Math.max(this.seen, events[events.length - 1]?.position ?? 0)
    this.buffer = []
    this.bufferBytes = 0
    this.flushing = (async () => {
      try {
        await applyBatch(this.reads, this.projections, this.checkpoints, events, through)
        if (events.length > 0) for (const listener of this.appliedListeners) listener(events)
        this.advance()
      } catch (err) {
        this.detach()
        if (!(err instanceof CheckpointConflictError)) {
          // A failed write (a busy or full disk): not ready; the tick subscribes again from the checkpoints.
          this.failure = err
          this.failedAt = Date.now()
          return
        }
        await this.reloadCheckpoints()
        if (this.leader && !this.stopped) this.subscribe()
      }
    })()
    try {
      await this.flushing
    } finally {
      this.flushing = null
    }
  }

  get ready(): boolean {
    return this.caughtUp && this.failure === null
  }

  /** Why the read models are not ready (null when they are): not caught up once yet, or a failed subscription or write being renewed (with its error). */
  get notReady(): { problem: 'catching_up' | 'resubscribing'; detail: string | null } | null {
    if (this.failure !== null) return { problem: 'resubscribing', detail: this.failure instanceof Error ? this.failure.message : String(this.failure) }
    return this.caughtUp ? null : { problem: 'catching_up', detail: null }
  }

  /**
   * Resolves true when every projection has applied events up to `position`, or false
   * after `timeoutMs` (ms) — the response then goes out and the caller may see a stale read.
   */
  async waitFor(position: number, timeoutMs = 5_000): Promise<boolean> {
    if (this.position >= position) return true
    return await new Promise<boolean>(resolve => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter(w => w.resolve !== done)
        resolve(false)
      }, timeoutMs)
      const done = (): void => {
        clearTimeout(timer)
        resolve(true)
      }
      this.waiters.push({ position, resolve: done })
    })
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
    await this.unsubscribe()
    while (this.flushing) await this.flushing.catch(() => undefined)
    await Promise.all(this.stopping)
    // Hand the lease over at once rather than after it expires.
    if (this.leader) await this.reads.lease(this.holder, 0).catch(() => undefined)
  }
}

/** Characters of event data committed in one batch at most (large events, such as batch chunks, make smaller batches). */
const BATCH_BYTES = 1024 * 1024

/** How long the projector waits after a failed batch before it subscribes again (ms). */
const RETRY_MS = 1_000
