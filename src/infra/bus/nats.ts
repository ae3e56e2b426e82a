import { createConnection } from 'node:net'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import {
  jetstream,
  jetstreamManager,
  AckPolicy,
  RetentionPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg
} from '@nats-io/jetstream'
import { nanos } from '@nats-io/nats-core'
import type { RecordedEvent } from '../../ports/event-store.ts'
import { RetryLater, type Bus, type BusHandler, type Consumer, type ConsumerOptions } from '../../ports/bus.ts'

/** Which services receive which event types: one JetStream stream per service. */
type Routes = Readonly<Record<string, readonly string[]>>

export interface NatsBusOptions {
  /** Prefix of stream names and subjects (tests use a random one). */
  prefix?: string
  routes: Routes
  /** How long the server waits for an ack before redelivering, ms. Handlers signal progress meanwhile. */
  ack_wait_ms?: number
  /** Dedup window for `Nats-Msg-Id`, ms. */
  duplicate_window_ms?: number
  /** How long `stop()` waits for in-flight handlers before giving their messages back, ms. */
  drain_ms?: number
  log?: (msg: string, err?: unknown) => void
}

const encoder = new TextEncoder()

/**
 * Connection options from `NATS_URL` (`nats://[user:password@]host:port`, comma-separated
 * for a cluster): the credentials of the first server that names some are sent as user
 * and password (the client takes none from a URL), the servers without them.
 */
export function natsConnection(url: string): { servers: string[]; user?: string; pass?: string } {
  const servers: string[] = []
  let user: string | undefined
  let pass: string | undefined
  for (const s of url.split(',')) {
    const m = /^(nats:\/\/)(?:([^:@/]+)(?::([^@/]*))?@)?(.+)$/.exec(s.trim())
    if (!m) {
      servers.push(s.trim())
      continue
    }
    if (m[2] !== undefined && user === undefined) {
      user = decodeURIComponent(m[2])
      pass = m[3] === undefined ? undefined : decodeURIComponent(m[3])
    }
    servers.push(`${m[1]}${m[4]}`)
  }
  return { servers, ...(user !== undefined && { user }), ...(pass !== undefined && { pass }) }
}

/** Whether a NATS server accepts TCP connections at the first address of `url` (tests, benchmarks). */
export async function natsAnswers(url: string, timeoutMs = 1_000): Promise<boolean> {
  const [host, port] = natsConnection(url)
    .servers[0].replace(/^nats:\/\//, '')
    .split(':')
  return await new Promise<boolean>(resolve => {
    const s = createConnection({ host, port: Number(port ?? 4222) })
    const done = (ok: boolean): void => {
      s.destroy()
      resolve(ok)
    }
    s.setTimeout(timeoutMs, () => done(false))
    s.once('connect', () => done(true))
    s.once('error', () => done(false))
  })
}

/** Delay (ms) before the n-th redelivery of a failed message: 1 s, 2 s, 4 s … up to 60 s. */
const backoff = (delivery: number): number => Math.min(60_000, 1_000 * 2 ** Math.max(0, delivery - 1))

/**
 * Bus on NATS JetStream (docs/design/architecture.md "Fan-out"). Each service has a stream
 * (`<PREFIX>_<SERVICE>`, work-queue retention, subjects `<prefix>.<service>.>`) and one
 * durable pull consumer of the same name with explicit acks, filtered on that one subject
 * (NATS 2.9 allows one filter per consumer). `publish` puts an event on the stream of
 * every service that wants its type, with the event id as `Nats-Msg-Id`, so a re-publish
 * within the dedup window is dropped; it resolves when JetStream has stored it.
 * Instances of a service share its consumer: each message goes to one of them. A handler
 * that throws gets a `nak` with back-off delay; after `max_deliveries` the message is
 * `term`ed. A message whose handler is still running is kept alive with `working()`.
 */
export class NatsBus implements Bus {
  private readonly nc: NatsConnection
  private readonly js: JetStreamClient
  private readonly jsm: JetStreamManager
  private readonly o: Required<Omit<NatsBusOptions, 'log'>> & { log: (msg: string, err?: unknown) => void }
  private readonly ready = new Map<string, Promise<void>>()
  private readonly redelivered: Record<string, number> = {}

  private constructor(nc: NatsConnection, jsm: JetStreamManager, options: NatsBusOptions) {
    this.nc = nc
    this.jsm = jsm
    this.js = jetstream(nc)
    this.o = {
      prefix: options.prefix ?? 'svc',
      routes: options.routes,
      ack_wait_ms: options.ack_wait_ms ?? 30_000,
      duplicate_window_ms: options.duplicate_window_ms ?? 120_000,
      drain_ms: options.drain_ms ?? 10_000,
      log:
        options.log ??
        ((m, e) => {
          console.error(m, e)
        })
    }
  }

  /** Connects to `url` (`nats://host:port`, comma-separated for a cluster). @throws when no server answers. */
  static async connect(url: string, options: NatsBusOptions): Promise<NatsBus> {
    // No async stack traces: each request would capture a stack (a third of the relay's CPU at high rates).
    const nc = await connect({ ...natsConnection(url), name: `svc-${process.pid}`, maxReconnectAttempts: -1, noAsyncTraces: true })
    return new NatsBus(nc, await jetstreamManager(nc), options)
  }

  private streamOf(service: string): string {
    return `${this.o.prefix}_${service}`.toUpperCase().replace(/[^A-Z0-9_-]/g, '_')
  }
  private subjectOf(service: string, type: string): string {
    return `${this.o.prefix}.${service}.${type}`
  }

  /** Creates the service's stream if missing (idempotent). */
  private async ensureStream(service: string): Promise<void> {
    let p = this.ready.get(service)
    if (!p) {
      p = (async () => {
        const name = this.streamOf(service)
        try {
          await this.jsm.streams.info(name)
        } catch {
          await this.jsm.streams.add({
            name,
            subjects: [`${this.o.prefix}.${service}.>`],
            retention: RetentionPolicy.Workqueue,
            duplicate_window: nanos(this.o.duplicate_window_ms)
          })
        }
      })()
      this.ready.set(service, p)
      p.catch(() => this.ready.delete(service))
    }
    await p
  }

  async publish(event: RecordedEvent): Promise<void> {
    const services = Object.entries(this.o.routes)
      .filter(([, types]) => types.includes(event.type))
      .map(([s]) => s)
    await Promise.all(
      services.map(async service => {
        await this.ensureStream(service)
        await this.js.publish(this.subjectOf(service, event.type), encoder.encode(JSON.stringify(event)), { msgID: event.id })
      })
    )
  }

  async consume(options: ConsumerOptions, handler: BusHandler): Promise<Consumer> {
    const service = options.name
    await this.ensureStream(service)
    const stream = this.streamOf(service)
    const config = {
      durable_name: service,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: `${this.o.prefix}.${service}.>`,
      ack_wait: nanos(this.o.ack_wait_ms),
      // Deliveries are counted by the server, RetryLater ones included: leave room for them;
      // failures are bounded by `max_deliveries` in the handler below.
      max_deliver: -1,
      max_ack_pending: options.max_pending ?? Math.max(1_000, options.concurrency * 4)
    }
    // The durable consumer (its position is the server's): made or brought up to date, again after each failure
    // (a consume aborts when its consumer or stream is gone: `abort_on_missing_resource`, and is made again here).
    const ensure = async (): Promise<void> => {
      try {
        await this.jsm.consumers.info(stream, service)
        await this.jsm.consumers.update(stream, service, {
          ack_wait: config.ack_wait,
          max_deliver: config.max_deliver,
          max_ack_pending: config.max_ack_pending
        })
      } catch {
        await this.jsm.consumers.add(stream, config)
      }
    }
    await ensure()
    let messages = await (await this.js.consumers.get(stream, service)).consume({ max_messages: options.concurrency, abort_on_missing_resource: true })
    const inFlight = new Set<Promise<void>>()
    const slots: Array<() => void> = []
    let stopping = false
    let down: string | null = null
    let failures = 0
    const max = options.max_deliveries ?? 5

    const handle = async (m: JsMsg): Promise<void> => {
      const alive = setInterval(
        () => {
          m.working()
        },
        Math.max(1_000, Math.floor(this.o.ack_wait_ms / 3))
      )
      alive.unref()
      try {
        const event = m.json<RecordedEvent>()
        if (!options.event_types.includes(event.type)) {
          m.ack()
          return
        }
        await handler(event)
        m.ack()
      } catch (err) {
        if (err instanceof RetryLater) {
          m.nak(err.delay_ms)
          return
        }
        const delivery = m.info.deliveryCount
        if (delivery >= max) {
          this.o.log(`consumer ${service}: giving up on message ${m.seq} after ${delivery} deliveries`, err)
          m.term(String(err).slice(0, 200))
        } else {
          this.redelivered[service] = (this.redelivered[service] ?? 0) + 1
          m.nak(backoff(delivery))
        }
      } finally {
        clearInterval(alive)
      }
    }

    // Consumes until stopped. The stream of messages ends or fails (the consumer deleted,
    // the server gone past the client's reconnects): down (said by `problem`) until a new
    // one is made from the durable consumer, 100 ms doubling up to 5 s between tries.
    const loop = (async () => {
      while (!stopping) {
        try {
          for await (const m of messages) {
            if (stopping) {
              m.nak()
              continue
            }
            failures = 0
            while (inFlight.size >= options.concurrency) await new Promise<void>(resolve => slots.push(resolve))
            const p = handle(m).finally(() => {
              inFlight.delete(p)
              slots.shift()?.()
            })
            inFlight.add(p)
          }
          if (stopping) return
          throw new Error('the message stream ended')
        } catch (err) {
          // Stopped, or the connection closed (the bus closed: nothing to consume from again).
          if (stopping || this.nc.isClosed() || this.nc.isDraining()) return
          down = err instanceof Error ? err.message : String(err)
          const delay = Math.min(5_000, 100 * 2 ** failures++)
          this.o.log(`consumer ${service} stopped; consuming again in ${delay} ms`, err)
          await new Promise(resolve => setTimeout(resolve, delay).unref())
          if (stopping || this.nc.isClosed()) return
          try {
            await ensure()
            messages = await (await this.js.consumers.get(stream, service)).consume({ max_messages: options.concurrency, abort_on_missing_resource: true })
            down = null
            this.o.log(`consumer ${service} consuming again`)
          } catch (again) {
            down = again instanceof Error ? again.message : String(again)
          }
        }
      }
    })()

    return {
      get problem() {
        return down
      },
      stop: async () => {
        stopping = true
        await messages.close().catch(() => undefined)
        // Finish in-flight work (each is acked or nak'ed by its own handler) within the drain time.
        await Promise.race([Promise.all(inFlight), new Promise(resolve => setTimeout(resolve, this.o.drain_ms))])
        await loop
      }
    }
  }

  redeliveries(): Readonly<Record<string, number>> {
    return this.redelivered
  }

  /** Deletes this bus's streams (tests). */
  async destroy(): Promise<void> {
    for (const service of Object.keys(this.o.routes)) await this.jsm.streams.delete(this.streamOf(service)).catch(() => false)
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close())
  }
}
