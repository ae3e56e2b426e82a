import type { EventStore, Subscription } from '../infra/eventstore/port.ts'
import type { Bus } from '../infra/bus/port.ts'

/** Where the relay keeps its checkpoint (the SQLite event store implements it). */
export interface CheckpointStore {
  getCheckpoint (name: string): Promise<number>
  setCheckpoint (name: string, position: number): Promise<void>
}

/**
 * The relay (ARCHITECTURE.md "Fan-out"): reads committed events in global order from its
 * checkpoint and publishes them to the bus, up to `window` publishes in flight. The stored
 * checkpoint only passes an event once it and every event before it were accepted by the
 * bus, so a restart re-publishes (never skips); the bus and consumers drop duplicates.
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
  private order: number[] = []
  private slots: Array<() => void> = []
  private saved = 0
  /** Whether the relay has read everything stored when it started (ready). */
  caughtUp = false

  constructor (store: EventStore, bus: Bus, checkpoints: CheckpointStore, options: { name?: string, window?: number, event_types?: readonly string[] } = {}) {
    this.store = store
    this.bus = bus
    this.checkpoints = checkpoints
    this.name = options.name ?? 'relay'
    this.window = options.window ?? 256
    this.eventTypes = options.event_types
  }

  async start (): Promise<void> {
    this.saved = await this.checkpoints.getCheckpoint(this.name)
    this.sub = this.store.subscribeToAll({ from_position: this.saved, event_types: this.eventTypes, on_caught_up: () => { this.caughtUp = true } }, async event => {
      while (this.pending.size >= this.window) await new Promise<void>(resolve => this.slots.push(resolve))
      this.pending.set(event.position, false)
      this.order.push(event.position)
      void this.publish(event)
    }, err => { console.error('relay subscription stopped', err) })
  }

  private async publish (event: Parameters<Bus['publish']>[0]): Promise<void> {
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
    let advanced = -1
    while (this.order.length > 0 && this.pending.get(this.order[0]) === true) {
      advanced = this.order.shift()!
      this.pending.delete(advanced)
    }
    if (advanced > this.saved) {
      this.saved = advanced
      await this.checkpoints.setCheckpoint(this.name, advanced)
    }
    for (const s of this.slots.splice(0)) s()
  }

  /** Checkpoint stored so far (every event up to it was accepted by the bus). */
  get checkpoint (): number { return this.saved }

  async stop (): Promise<void> { await this.sub?.stop() }
}
