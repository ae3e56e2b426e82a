import type { EventStore, Subscription } from '../infra/eventstore/port.ts'
import type { Projection, ProjectionContext } from './projection.ts'

/**
 * Runs projections from their checkpoints, catch-up then live, in global order. Each
 * projection has its own checkpoint in the read store; an event at or below a projection's
 * checkpoint is not applied to it again. `waitFor` gives read-your-writes: it resolves once
 * every projection has passed a given global position.
 */
export class ProjectionRunner {
  private readonly store: EventStore
  private readonly projections: readonly Projection[]
  private readonly ctx: ProjectionContext
  private readonly checkpoints = new Map<string, number>()
  private waiters: Array<{ position: number, resolve: () => void }> = []
  private sub: Subscription | null = null
  private caughtUp = false
  private failure: unknown = null
  /** Lowest checkpoint over all projections (global position). */
  position = 0

  constructor (store: EventStore, projections: readonly Projection[], ctx: ProjectionContext) {
    this.store = store
    this.projections = projections
    this.ctx = ctx
  }

  /** Starts the subscription; resolves when the projections have caught up with the store. */
  async start (): Promise<void> {
    for (const p of this.projections) this.checkpoints.set(p.name, await this.ctx.store.getCheckpoint(p.name))
    this.position = Math.min(...this.checkpoints.values())
    const types = new Set(this.projections.flatMap(p => p.event_types))
    let caughtUp!: () => void
    const ready = new Promise<void>(resolve => { caughtUp = resolve })
    this.sub = this.store.subscribeToAll({
      from_position: this.position,
      event_types: [...types],
      on_checkpoint: pos => { this.advance(pos) },
      on_caught_up: () => { this.caughtUp = true; caughtUp() }
    }, async event => {
      for (const p of this.projections) {
        if ((this.checkpoints.get(p.name) ?? 0) >= event.position) continue
        if (p.event_types.includes(event.type)) await p.apply(event, this.ctx)
        this.checkpoints.set(p.name, event.position)
        await this.ctx.store.setCheckpoint(p.name, event.position)
      }
    }, err => {
      this.failure = err
      console.error('projection runner stopped', err)
    })
    await ready
  }

  private advance (position: number): void {
    this.position = Math.max(this.position, position)
    if (this.waiters.length === 0) return
    const due = this.waiters.filter(w => w.position <= this.position)
    this.waiters = this.waiters.filter(w => w.position > this.position)
    for (const w of due) w.resolve()
  }

  get ready (): boolean { return this.caughtUp && this.failure === null }

  /**
   * Resolves when every projection has applied events up to `position`, or after
   * `timeoutMs` (ms) — the response then goes out and the caller may see a stale read.
   */
  async waitFor (position: number, timeoutMs = 5_000): Promise<boolean> {
    if (this.position >= position) return true
    return await new Promise<boolean>(resolve => {
      const timer = setTimeout(() => { resolve(false) }, timeoutMs)
      this.waiters.push({ position, resolve: () => { clearTimeout(timer); resolve(true) } })
    })
  }

  async stop (): Promise<void> { await this.sub?.stop() }
}
