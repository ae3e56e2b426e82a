import type { RecordedEvent } from '../eventstore/port.ts'
import type { Bus, BusHandler, Consumer, ConsumerOptions } from './port.ts'

interface Entry {
  options: ConsumerOptions
  handler: BusHandler
  running: number
  queue: Array<{ event: RecordedEvent, done: () => void }>
  stopped: boolean
}

/** Delay (ms) before the n-th redelivery of a failed message: 50, 100, 200 … up to 5 s. */
const backoff = (attempt: number): number => Math.min(5_000, 50 * 2 ** (attempt - 1))

/**
 * In-process bus (embedded default). `publish` enqueues the event for every consumer
 * whose filter matches and resolves when all of them have handled it, so the relay's
 * checkpoint only passes events that were fully handled and nothing is lost on a crash.
 * Each consumer takes up to `concurrency` messages at once, in publish order; a failing
 * handler is retried with back-off up to `max_deliveries` times, then dropped and logged.
 * Duplicate publishes of an event id are dropped while the first is in flight or recent.
 */
export class InProcessBus implements Bus {
  private readonly consumers: Entry[] = []
  private readonly inFlight = new Map<string, Promise<void>>()
  private readonly recent = new Set<string>()
  private readonly recentOrder: string[] = []
  private readonly log: (msg: string, err?: unknown) => void

  constructor (log: (msg: string, err?: unknown) => void = (m, e) => { console.error(m, e) }) {
    this.log = log
  }

  async publish (event: RecordedEvent): Promise<void> {
    if (this.recent.has(event.id)) return
    const pending = this.inFlight.get(event.id)
    if (pending) return await pending
    const targets = this.consumers.filter(c => !c.stopped && c.options.event_types.includes(event.type))
    const all = Promise.all(targets.map(c => new Promise<void>(resolve => {
      c.queue.push({ event, done: resolve })
      this.pump(c)
    }))).then(() => {
      this.inFlight.delete(event.id)
      this.remember(event.id)
    })
    this.inFlight.set(event.id, all)
    await all
  }

  private remember (id: string): void {
    this.recent.add(id)
    this.recentOrder.push(id)
    if (this.recentOrder.length > 10_000) this.recent.delete(this.recentOrder.shift()!)
  }

  private pump (c: Entry): void {
    while (!c.stopped && c.running < c.options.concurrency && c.queue.length > 0) {
      const item = c.queue.shift()!
      c.running++
      void this.deliver(c, item.event).finally(() => {
        c.running--
        item.done()
        this.pump(c)
      })
    }
  }

  private async deliver (c: Entry, event: RecordedEvent): Promise<void> {
    const max = c.options.max_deliveries ?? 5
    for (let attempt = 1; ; attempt++) {
      try {
        await c.handler(event)
        return
      } catch (err) {
        if (attempt >= max || c.stopped) {
          this.log(`consumer ${c.options.name} gave up on ${event.type} ${event.id} after ${attempt} deliveries`, err)
          return
        }
        await new Promise(resolve => setTimeout(resolve, backoff(attempt)))
      }
    }
  }

  async consume (options: ConsumerOptions, handler: BusHandler): Promise<Consumer> {
    const entry: Entry = { options, handler, running: 0, queue: [], stopped: false }
    this.consumers.push(entry)
    return {
      stop: async () => {
        entry.stopped = true
        for (const item of entry.queue.splice(0)) item.done()
        while (entry.running > 0) await new Promise(resolve => setTimeout(resolve, 10))
      }
    }
  }

  async close (): Promise<void> {
    for (const c of this.consumers) c.stopped = true
  }
}
