import type { RecordedEvent } from '../../ports/event-store.ts'
import { RetryLater, type Bus, type BusHandler, type Consumer, type ConsumerOptions } from '../../ports/bus.ts'

interface Member {
  options: ConsumerOptions
  handler: BusHandler
  running: number
  queue: Array<{ event: RecordedEvent; attempt: number; done: () => void }>
  stopped: boolean
}

interface Group {
  name: string
  members: Member[]
  next: number
}

/** Delay (ms) before the n-th redelivery of a failed message: 50, 100, 200 … up to 5 s. */
const backoff = (attempt: number): number => Math.min(5_000, 50 * 2 ** (attempt - 1))

/** Published event ids remembered after delivery (a duplicate publish of one of them is dropped). */
const RECENT = 10_000

/**
 * In-process bus (embedded default). Consumers of one name form a group (instances of one
 * service): each message goes to one member, round robin. `publish` resolves when every
 * group that wants the event has handled it, so the relay's checkpoint only passes events
 * that were fully handled and nothing is lost on a crash. A member takes up to
 * `concurrency` messages at once, in publish order; a failing handler is retried with
 * back-off (possibly by another member) up to `max_deliveries` times, then dropped and
 * logged. Duplicate publishes of an event id are dropped while in flight or recent.
 */
export class InProcessBus implements Bus {
  private readonly groups = new Map<string, Group>()
  private readonly inFlight = new Map<string, Promise<void>>()
  private readonly recent = new Set<string>()
  /** The last RECENT ids remembered, oldest overwritten first (a ring: no array shifted per publish). */
  private readonly recentRing: Array<string | undefined> = new Array(RECENT)
  private recentAt = 0
  private readonly log: (msg: string, err?: unknown) => void
  private readonly redelivered: Record<string, number> = {}

  constructor(
    log: (msg: string, err?: unknown) => void = (m, e) => {
      console.error(m, e)
    }
  ) {
    this.log = log
  }

  async publish(event: RecordedEvent): Promise<void> {
    if (this.recent.has(event.id)) return
    const pending = this.inFlight.get(event.id)
    if (pending) return await pending
    const targets = [...this.groups.values()].filter(g => g.members.some(m => !m.stopped && m.options.event_types.includes(event.type)))
    const all = Promise.all(
      targets.map(
        g =>
          new Promise<void>(resolve => {
            this.dispatch(g, event, 1, resolve)
          })
      )
    ).then(() => {
      this.inFlight.delete(event.id)
      this.remember(event.id)
    })
    this.inFlight.set(event.id, all)
    await all
  }

  private dispatch(g: Group, event: RecordedEvent, attempt: number, done: () => void): void {
    const live = g.members.filter(m => !m.stopped)
    if (live.length === 0) {
      done()
      return
    }
    const member = live[g.next++ % live.length]
    member.queue.push({ event, attempt, done })
    this.pump(g, member)
  }

  private remember(id: string): void {
    const oldest = this.recentRing[this.recentAt]
    if (oldest !== undefined) this.recent.delete(oldest)
    this.recentRing[this.recentAt] = id
    this.recentAt = (this.recentAt + 1) % RECENT
    this.recent.add(id)
  }

  private pump(g: Group, m: Member): void {
    while (!m.stopped && m.running < m.options.concurrency && m.queue.length > 0) {
      const item = m.queue.shift()!
      m.running++
      void this.deliver(g, m, item).finally(() => {
        m.running--
        this.pump(g, m)
      })
    }
  }

  private async deliver(g: Group, m: Member, item: Member['queue'][number]): Promise<void> {
    const max = m.options.max_deliveries ?? 5
    try {
      await m.handler(item.event)
      item.done()
    } catch (err) {
      if (err instanceof RetryLater) {
        // Held in memory only: the publish counts as handled (after a restart, the owner
        // of the work finds it again, e.g. deferred jobs in the read store).
        item.done()
        setTimeout(() => {
          this.dispatch(g, item.event, item.attempt, () => {})
        }, err.delay_ms).unref()
        return
      }
      if (item.attempt >= max) {
        this.log(`consumer ${m.options.name} gave up on ${item.event.type} ${item.event.id} after ${item.attempt} deliveries`, err)
        item.done()
        return
      }
      this.redelivered[m.options.name] = (this.redelivered[m.options.name] ?? 0) + 1
      setTimeout(() => {
        this.dispatch(g, item.event, item.attempt + 1, item.done)
      }, backoff(item.attempt))
    }
  }

  async consume(options: ConsumerOptions, handler: BusHandler): Promise<Consumer> {
    const g = this.groups.get(options.name) ?? { name: options.name, members: [], next: 0 }
    this.groups.set(options.name, g)
    const member: Member = { options, handler, running: 0, queue: [], stopped: false }
    g.members.push(member)
    return {
      stop: async () => {
        member.stopped = true
        // Messages it had not started go to the other members, if any.
        for (const item of member.queue.splice(0)) this.dispatch(g, item.event, item.attempt, item.done)
        while (member.running > 0) await new Promise(resolve => setTimeout(resolve, 10))
      }
    }
  }

  redeliveries(): Readonly<Record<string, number>> {
    return this.redelivered
  }

  async close(): Promise<void> {
    for (const g of this.groups.values()) for (const m of g.members) m.stopped = true
  }
}
