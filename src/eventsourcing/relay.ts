import pRetry from 'p-retry'
import type { EventStore, Subscription } from '../ports/event-store.ts'
import type { Bus } from '../ports/bus.ts'

/** Where the relay keeps its checkpoint (the SQLite event store implements it). */
export interface CheckpointStore {
  getCheckpoint(name: string): Promise<number>
  setCheckpoint(name: string, position: number): Promise<void>
}

/** How often the relay writes its checkpoint while events flow (ms). */
const SAVE_EVERY_MS = 100

/**
 * The relay (docs/design/architecture.md "Fan-out"): reads committed events in global order from its
 * checkpoint and publishes them to the bus, up to `window` publishes (and `window_bytes`
 * of event data) in flight, the events
 * that arrived in one turn together (one socket write). The stored checkpoint only passes
 * an event once it and every event before it were accepted by the bus, and is written at
 * most every SAVE_EVERY_MS, so a restart re-publishes (never skips); the bus and consumers
 * drop duplicates.
 */
export class Relay {
  private readonly store: EventStore
  private readonly bus: Bus
  private readonly checkpoints: CheckpointStore
  private readonly name: string
  private readonly window: number
  private readonly eventTypes: readonly string[] | undefined
  private sub: Subscription | null = null
  private readonly pending = new Map<number, boolean>()
  /** Characters of event data in flight (events' `size`), at most `window_bytes` (one event at least). */
  private pendingBytes = 0
  private readonly sizes = new Map<number, number>()
  private readonly windowBytes: number
  private order: number[] = []
  private slots: Array<() => void> = []
  /** Events taken from the subscription, published together on the next turn (one socket write for many). */
  private queue: Parameters<Bus['publish']>[0][] = []
  private pumping = false
  private saved = 0
  /** Checkpoint last written to the store (written at most every SAVE_EVERY_MS while events flow). */
  private stored = 0
  private saving: Promise<void> | null = null
  private saveTimer: NodeJS.Timeout | null = null
  /** Whether the relay has read everything stored when it started (ready). */
  caughtUp = false
  /** Position of the last event the subscription handed over (published or filtered out): where a new subscription starts. */
  private read = 0
  /** The subscription's last error while it is down (null while subscribed). */
  private down: string | null = null
  /** Subscription errors so far (each followed by a new subscription). */
  resubscriptions = 0
  private retryTimer: NodeJS.Timeout | null = null
  private stopped = false
  private readonly log: (msg: string, err?: unknown) => void

  constructor(
    store: EventStore,
    bus: Bus,
    checkpoints: CheckpointStore,
    options: {
      name?: string
      window?: number
      window_bytes?: number
      event_types?: readonly string[]
      /** Where the relay says what went wrong (a subscription error, a publish retried). */
      log?: (msg: string, err?: unknown) => void
    } = {}
  ) {
    this.log =
      options.log ??
      ((msg, err) => {
        console.error(msg, err)
      })
    this.store = store
    this.bus = bus
    this.checkpoints = checkpoints
    this.name = options.name ?? 'relay'
    this.window = options.window ?? 4_096
    this.windowBytes = options.window_bytes ?? 16 * 1024 * 1024
    this.eventTypes = options.event_types
  }

  async start(): Promise<void> {
    this.saved = await this.checkpoints.getCheckpoint(this.name)
    this.stored = this.saved
    this.read = this.saved
    this.subscribe()
  }

  /**
   * Subscribes from `read`, the last event handed over: after an error, neither an event
   * skipped nor one published twice by this process (a restart starts from the stored
   * checkpoint instead, and the bus drops what it saw). An error marks the relay down
   * (not ready, with the error) and subscribes again after a back-off of 100 ms doubling
   * up to 5 s.
   */
  private subscribe(): void {
    const token = {}
    this.current = token
    this.sub = this.store.subscribeToAll(
      {
        from_position: this.read,
        event_types: this.eventTypes,
        on_caught_up: () => {
          if (this.current !== token) return
          this.caughtUp = true
          if (this.down !== null) {
            this.log(`relay: subscribed again after ${this.resubscriptions} error(s), caught up at ${this.read}`)
            this.down = null
            this.failures = 0
          }
        },
        on_checkpoint: position => {
          if (this.current === token) this.read = position
        }
      },
      async event => {
        if (this.current !== token) return
        while (this.pending.size >= this.window || (this.pending.size > 0 && this.pendingBytes >= this.windowBytes))
          await new Promise<void>(resolve => this.slots.push(resolve))
        this.pending.set(event.position, false)
        this.sizes.set(event.position, event.size ?? 0)
        this.pendingBytes += event.size ?? 0
        this.order.push(event.position)
        this.queue.push(event)
        if (!this.pumping) {
          this.pumping = true
          // Published on the next turn, all at once: the client writes them to its socket together.
          setImmediate(() => {
            this.pumping = false
            const batch = this.queue
            this.queue = []
            for (const e of batch) void this.publish(e)
          })
        }
      },
      err => {
        if (this.current !== token || this.stopped) return
        this.current = null
        this.down = err instanceof Error ? err.message : String(err)
        this.resubscriptions++
        const delay = Math.min(5_000, 100 * 2 ** this.failures++)
        this.log(`relay: subscription failed at position ${this.read}; subscribing again in ${delay} ms`, err)
        const old = this.sub
        this.sub = null
        void old?.stop().catch(() => undefined)
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null
          if (!this.stopped) this.subscribe()
        }, delay)
      }
    )
  }

  /** The subscription a delivery belongs to (deliveries of an ended one are ignored). */
  private current: object | null = null
  /** Errors in a row since the relay last caught up (the back-off doubles with each). */
  private failures = 0

  /** Why the relay is not ready (null when it is): not caught up yet, or its subscription down and being renewed. */
  get notReady(): { problem: 'starting' | 'resubscribing'; detail: string | null } | null {
    if (this.down !== null) return { problem: 'resubscribing', detail: this.down }
    if (!this.caughtUp) return { problem: 'starting', detail: null }
    return null
  }

  private async publish(event: Parameters<Bus['publish']>[0]): Promise<void> {
    // Until the bus takes it (p-retry: 200 ms doubling up to 5 s, without end): the checkpoint waits for it.
    try {
      await pRetry(async () => await this.bus.publish(event), {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: 200,
        maxTimeout: 5_000,
        shouldRetry: () => !this.stopped,
        onFailedAttempt: ({ error, attemptNumber }) => {
          this.log(`relay: publish of ${event.id} failed (attempt ${attemptNumber})`, error)
        }
      })
    } catch (err) {
      // Stopped, or an error p-retry does not retry (a programming error): the event stays
      // unpublished and the checkpoint before it (a restart publishes it); the lag shows it.
      if (!this.stopped) this.log(`relay: publish of ${event.id} given up`, err)
      return
    }
    this.pending.set(event.position, true)
    this.pendingBytes -= this.sizes.get(event.position) ?? 0
    this.sizes.delete(event.position)
    let advanced = -1
    while (this.order.length > 0 && this.pending.get(this.order[0]) === true) {
      advanced = this.order.shift()!
      this.pending.delete(advanced)
    }
    if (advanced > this.saved) {
      this.saved = advanced
      this.saveSoon()
    }
    for (const s of this.slots.splice(0)) s()
  }

  /** Writes the checkpoint at most every SAVE_EVERY_MS (a restart re-publishes what came after it: the bus drops duplicates). */
  private saveSoon(): void {
    if (this.saveTimer !== null) return
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null
      void this.save()
    }, SAVE_EVERY_MS)
  }

  private async save(): Promise<void> {
    while (this.saving) await this.saving
    if (this.saved <= this.stored) return
    const position = this.saved
    this.saving = this.checkpoints
      .setCheckpoint(this.name, position)
      .then(() => {
        this.stored = Math.max(this.stored, position)
      })
      .catch((err: unknown) => {
        console.error('relay: checkpoint not saved', err)
      })
      .finally(() => {
        this.saving = null
      })
    await this.saving
  }

  /** Checkpoint stored so far (every event up to it was accepted by the bus). */
  get checkpoint(): number {
    return this.saved
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.current = null
    if (this.retryTimer !== null) clearTimeout(this.retryTimer)
    await this.sub?.stop()
    if (this.saveTimer !== null) {
      clearTimeout(this.saveTimer)
      this.saveTimer = null
    }
    await this.save()
  }
}
