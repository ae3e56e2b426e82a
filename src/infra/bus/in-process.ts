import type { RecordedEvent } from '../../ports/event-store.ts'
import { RetryLater, type Bus, type BusHandler, type Consumer, type ConsumerOptions } from '../../ports/bus.ts'
import type { HeldDeliveries } from '../../ports/held-deliveries.ts'

/** Where held deliveries are kept, and how a held event is read again (by its stream and revision). */
export interface DurableHolds {
  holds: HeldDeliveries
  load: (stream: string, revision: number) => Promise<RecordedEvent | null>
}

interface Member {
  options: ConsumerOptions
  handler: BusHandler
  running: number
  /** `held`: a delivery that waited in the held deliveries (its row is released when its handler succeeds). */
  queue: Array<{ event: RecordedEvent; attempt: number; done: () => void; held: boolean }>
  stopped: boolean
}

interface Group {
  name: string
  members: Member[]
  next: number
  /** Whether the deliveries this consumer had waiting before a restart were scheduled again. */
  resumed: boolean
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
 * back-off (possibly by another member) up to `max_deliveries` times, then given up and
 * logged. Duplicate publishes of an event id are dropped while in flight or recent.
 * With `durable` (the embedded default: the event store's table), a `RetryLater` is written
 * as a held delivery before the publish counts as handled, and a message given up as a
 * dead letter; a consumer that starts delivers what it had waiting again, when due. So a
 * restart resumes held work, at least once, as NATS does.
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
  private readonly durable: DurableHolds | null
  private closed = false

  constructor(
    log: (msg: string, err?: unknown) => void = (m, e) => {
      console.error(m, e)
    },
    durable: DurableHolds | null = null
  ) {
    this.log = log
    this.durable = durable
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
            this.dispatch(g, event, 1, resolve, false)
          })
      )
    ).then(() => {
      this.inFlight.delete(event.id)
      this.remember(event.id)
    })
    this.inFlight.set(event.id, all)
    await all
  }

  private dispatch(g: Group, event: RecordedEvent, attempt: number, done: () => void, held: boolean): void {
    const live = g.members.filter(m => !m.stopped)
    if (live.length === 0) {
      done()
      return
    }
    const member = live[g.next++ % live.length]
    member.queue.push({ event, attempt, done, held })
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
      if (item.held) await this.unhold(m.options.name, item.event.id)
      item.done()
    } catch (err) {
      if (err instanceof RetryLater) {
        // Held where a restart finds it, then the publish counts as handled.
        await this.hold(m.options.name, item.event, item.attempt, Date.now() + err.delay_ms, 'waiting', null)
        item.done()
        setTimeout(() => {
          if (!this.closed) this.dispatch(g, item.event, item.attempt, () => {}, true)
        }, err.delay_ms).unref()
        return
      }
      if (item.attempt >= max) {
        this.log(`consumer ${m.options.name} gave up on ${item.event.type} ${item.event.id} after ${item.attempt} deliveries (kept as a dead letter)`, err)
        await this.hold(m.options.name, item.event, item.attempt, Date.now(), 'dead', String(err instanceof Error ? err.message : err).slice(0, 500))
        item.done()
        return
      }
      this.redelivered[m.options.name] = (this.redelivered[m.options.name] ?? 0) + 1
      setTimeout(() => {
        this.dispatch(g, item.event, item.attempt + 1, item.done, item.held)
      }, backoff(item.attempt))
    }
  }

  /** Keeps a delivery of `event` to `consumer` (waiting until `dueMs`, or dead); a failure to keep it is logged (the hold then lives in memory only). */
  private async hold(consumer: string, event: RecordedEvent, attempts: number, dueMs: number, state: 'waiting' | 'dead', error: string | null): Promise<void> {
    if (!this.durable) return
    await this.durable.holds
      .holdDelivery({
        consumer,
        event_id: event.id,
        stream: event.stream,
        revision: event.revision,
        type: event.type,
        due_at: new Date(dueMs).toISOString(),
        attempts,
        state,
        last_error: error
      })
      .catch((err: unknown) => {
        this.log(`consumer ${consumer}: a held delivery of ${event.type} ${event.id} could not be kept`, err)
      })
  }

  private async unhold(consumer: string, eventId: string): Promise<void> {
    await this.durable?.holds.releaseDelivery(consumer, eventId).catch((err: unknown) => {
      this.log(`consumer ${consumer}: a held delivery of ${eventId} could not be released`, err)
    })
  }

  /** Delivers again, when due, what `g` had waiting before this process started. */
  private async resume(g: Group): Promise<void> {
    if (!this.durable || g.resumed) return
    g.resumed = true
    for (const h of await this.durable.holds.heldDeliveries(g.name, 'waiting')) {
      setTimeout(
        () => {
          void (async () => {
            if (this.closed) return
            const event = await this.durable!.load(h.stream, h.revision)
            if (event === null || event.id !== h.event_id) {
              await this.unhold(g.name, h.event_id)
              return
            }
            this.dispatch(g, event, h.attempts, () => {}, true)
          })().catch((err: unknown) => {
            this.log(`consumer ${g.name}: a held delivery of ${h.event_id} could not be resumed`, err)
          })
        },
        Math.max(0, Date.parse(h.due_at) - Date.now())
      ).unref()
    }
  }

  async consume(options: ConsumerOptions, handler: BusHandler): Promise<Consumer> {
    const g = this.groups.get(options.name) ?? { name: options.name, members: [], next: 0, resumed: false }
    this.groups.set(options.name, g)
    const member: Member = { options, handler, running: 0, queue: [], stopped: false }
    g.members.push(member)
    await this.resume(g)
    return {
      stop: async () => {
        member.stopped = true
        // Messages it had not started go to the other members, if any.
        for (const item of member.queue.splice(0)) this.dispatch(g, item.event, item.attempt, item.done, item.held)
        while (member.running > 0) await new Promise(resolve => setTimeout(resolve, 10))
      }
    }
  }

  redeliveries(): Readonly<Record<string, number>> {
    return this.redelivered
  }

  async close(): Promise<void> {
    this.closed = true
    for (const g of this.groups.values()) for (const m of g.members) m.stopped = true
  }
}
