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
 * The relay (ARCHITECTURE.md "Fan-out"): reads committed events in global order from its
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

  constructor(
    store: EventStore,
    bus: Bus,
    checkpoints: CheckpointStore,
    options: { name?: string; window?: number; window_bytes?: number; event_types?: readonly string[] } = {}
  ) {
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
    this.sub = this.store.subscribeToAll(
      {
        from_position: this.saved,
        event_types: this.eventTypes,
        on_caught_up: () => {
          this.caughtUp = true
        }
      },
      async event => {
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
        console.error('relay subscription stopped', err)
      }
    )
  }

  private async publish(event: Parameters<Bus['publish']>[0]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.bus.publish(event)
        break
      } catch (err) {
        console.error(`relay: publish of ${event.id} failed (attempt ${attempt})`, err)
        await new Promise(resolve => setTimeout(resolve, Math.min(5_000, 100 * 2 ** attempt)))
      }
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
    await this.sub?.stop()
    if (this.saveTimer !== null) {
      clearTimeout(this.saveTimer)
      this.saveTimer = null
    }
    await this.save()
  }
}
