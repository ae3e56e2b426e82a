import { InProcessRateCounter, type RateCounter } from './ports/rate-limit.ts'
import type { Billing } from './ports/billing.ts'
import { join } from 'node:path'
import { pino, type Logger } from 'pino'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from './config.ts'
import { InProcessBus, type DurableHolds } from './infra/bus/in-process.ts'
import type { HeldDeliveries } from './ports/held-deliveries.ts'
import type { EventStore } from './ports/event-store.ts'
import type { Bus } from './ports/bus.ts'
import { OutboxMailer, SmtpMailer } from './infra/mail/nodemailer.ts'
import type { Mailer } from './ports/mail.ts'
import { openCore, type Core } from './core.ts'
import { ProjectionRunner } from './eventsourcing/projection-runner.ts'
import { PROJECTIONS } from './projections/index.ts'
import { Relay } from './eventsourcing/relay.ts'
import { startVerifierWorker, VERIFIER_EVENTS } from './workers/verifier-worker.ts'
import { startFlowWorker } from './workers/flow-worker.ts'
import { FLOW_EVENTS, FLOWS } from './flows/index.ts'
import { answeredStale } from './http/read-your-writes.ts'
import { pendingByFlow, pendingFlows } from './eventsourcing/pending-flows.ts'
import { startIntakeWorker, INTAKE_EVENTS } from './workers/intake-worker.ts'
import { startBatchWorker, BATCH_WORKER_EVENTS } from './workers/batch-worker.ts'
import { startMailerWorker, MAILER_EVENTS } from './workers/mailer-worker.ts'
import { startBlobWorker, BLOB_EVENTS } from './workers/blob-worker.ts'
import type { BlobStore } from './ports/blob-store.ts'
import { FileBlobStore } from './infra/blobs/files.ts'
import { ListFileWork } from './lists/file-work.ts'
import { startWebhookWorker, WEBHOOK_RETRY_EVENTS, WEBHOOK_WORKER_EVENTS } from './workers/webhook-worker.ts'
import { webhookSender } from './infra/webhooks/sender.ts'
import type { NotReady, Readiness } from './http/runtime.ts'
import { buildEgressMonitor, buildEngine, egressNotReady } from './compose.ts'
import { boundServer, buildApp, buildHealthApp, REDACT, type AppOptions } from './http/app.ts'
import { CompletionWaits } from './http/waits.ts'
import { startMetricsServer } from './http/plugins/metrics.ts'
import { ServiceMetrics } from './infra/metrics.ts'
import { optionalAdapter } from './infra/optional-adapter.ts'

/** The processes the service can run as (docs/design/architecture.md "Ports and their adapters"). */
export const ROLES = ['serve', 'api', 'projector', 'relay', 'worker:verifier', 'worker:webhooks', 'worker:mailer'] as const
export type Role = (typeof ROLES)[number]

/**
 * What each role runs. `api`: the public API (and customers' kept files); `projections`: the
 * projection runner (read-your-writes, waits); `verifier`: the engine's consumers (jobs,
 * batches, intake, flows) and the egress self-test; `webhooks`, `mailer`: those consumers
 * (the mailer's role also erases kept files); `relay`: the relay. A role with a consumer or
 * the relay opens the bus.
 */
const PARTS: Readonly<Record<Role, Readonly<{ api: boolean; projections: boolean; verifier: boolean; webhooks: boolean; mailer: boolean; relay: boolean }>>> = {
  serve: { api: true, projections: true, verifier: true, webhooks: true, mailer: true, relay: true },
  api: { api: true, projections: true, verifier: false, webhooks: false, mailer: false, relay: false },
  projector: { api: false, projections: true, verifier: false, webhooks: false, mailer: false, relay: false },
  relay: { api: false, projections: false, verifier: false, webhooks: false, mailer: false, relay: true },
  'worker:verifier': { api: false, projections: false, verifier: true, webhooks: false, mailer: false, relay: false },
  'worker:webhooks': { api: false, projections: false, verifier: false, webhooks: true, mailer: false, relay: false },
  'worker:mailer': { api: false, projections: false, verifier: false, webhooks: false, mailer: true, relay: false }
}

/** Which service consumes which event types (one NATS stream and durable consumer each), as each worker declares them. */
export const ROUTES = {
  verifier: VERIFIER_EVENTS,
  intake: INTAKE_EVENTS,
  batches: BATCH_WORKER_EVENTS,
  webhooks: WEBHOOK_WORKER_EVENTS,
  webhook_retries: WEBHOOK_RETRY_EVENTS,
  mailer: MAILER_EVENTS,
  blobs: BLOB_EVENTS,
  flows: FLOW_EVENTS
} as const

export interface Service {
  role: Role
  app: FastifyInstance
  url: string
  metrics: ServiceMetrics
  /** `/metrics` on its own port (`METRICS_PORT`), or null. */
  metrics_url: string | null
  core: Core
  runner: ProjectionRunner | null
  /** Stops every part, in order, each even when one before it failed. @throws AggregateError naming the steps that failed. */
  close(): Promise<void>
}

/** The bus: NATS JetStream when `NATS_URL` is set, in-process otherwise; `onError` logs what its consumers and publishers say went wrong. */
async function openBus(config: Config, onError: (msg: string, err?: unknown) => void, store: EventStore, holds: HeldDeliveries | null): Promise<Bus> {
  // NATS's client loads only where it is configured (about 60 modules every other process would load for nothing).
  if (config.nats_url)
    return await (await import('./infra/bus/nats.ts')).NatsBus.connect(config.nats_url, {
      routes: ROUTES,
      prefix: config.nats.prefix,
      ack_wait_ms: config.nats.ack_wait_ms,
      log: onError
    })
  // Held deliveries live in the event store's database (SQLite or PostgreSQL), beside the relay's checkpoint.
  const durable: DurableHolds | null = holds
    ? {
        holds,
        load: async (stream, revision) => (await store.readStream(stream, { from_revision: revision, max_count: 1 }))[0] ?? null
      }
    : null
  return new InProcessBus(onError, durable)
}

/** Events behind a subscription that `/metrics` counts at most (`lag_events`): a scrape's cost stays bounded however far behind it is. */
const LAG_CAP = 100_000

/**
 * Starts one role (`svc serve` runs them all in one process):
 * - `api`: HTTP API; it runs the projection runner too: one process at a time projects
 *   (the projector lease), the others follow the stored checkpoints (read-your-writes);
 * - `projector`: the projection runner only;
 * - `relay`: committed events → bus, from its checkpoint;
 * - `worker:verifier`, `worker:webhooks`, `worker:mailer`: bus consumers (the webhook
 *   worker reads endpoints from the event store).
 * `options.now` replaces the commands' clock (tests move time instead of waiting for it).
 * Every role answers `/healthz` and `/readyz` (ready = connected and caught up) on
 * `HOST:PORT` and logs JSON lines (pino). `close` stops it gracefully, step by step in the
 * order docs/operations.md gives (HTTP first, the stores last; consumers finish their
 * in-flight work), each step named in a warning while it takes longer than 10 s.
 */
export async function startRole(
  role: Role,
  config: Config,
  options: { logger?: Logger; instrument?: AppOptions['instrument']; now?: () => Date } = {}
): Promise<Service> {
  const log = (options.logger ?? pino({ level: config.log_level, redact: REDACT })).child({ role })
  const core = await openCore(config, { now: options.now })
  const metrics = new ServiceMetrics(role)
  const { ctx, store } = core
  /** What the workers say went wrong: an error line with its cause. */
  const logError = (msg: string, err?: unknown): void => {
    log.error({ err }, msg)
  }
  /** A route's proxy failed a connection: the operator's log has the proxy and its reply (the customer's job says `proxy_error`). */
  const proxyFailed = (route: string, detail: string): void => {
    log.warn({ egress: { route, detail } }, 'egress: a proxy failed a connection')
  }
  /** The greylisting retry policy the verifier's jobs and the batches' parts share. */
  const greylist = { retry_ms: config.verifier.greylist_retry_ms, deadline_ms: config.verifier.greylist_deadline_ms }
  /** The webhook sender (the worker's deliveries and the API's test deliveries). */
  const sendWebhook = webhookSender({ timeout_ms: config.webhooks.timeout_ms, allow_private: config.webhooks.allow_private_targets })
  const parts = PARTS[role]
  /** Whether this role answers the public API (and holds customers' kept files). */
  const serveApi = parts.api
  // An erasure whose old key bytes a reader keeps in keys.db's WAL is said, never hidden.
  metrics.watchErasures(() => core.keys.erasureStatus())
  core.keys.onErasure(e => {
    const fields = { pending: e.pending, waited_ms: e.waited_ms, ...(e.error !== undefined && { error: e.error }) }
    if (e.type === 'scrubbed') log.info(fields, 'erasure: keys.db write-ahead log emptied; destroyed data keys are gone from disk')
    else if (e.type === 'stalled')
      log.warn(fields, "erasure: a reader holds keys.db's write-ahead log; destroyed data keys may still be on disk there (retrying)")
    else log.error(fields, "erasure: emptying keys.db's write-ahead log failed (retrying)")
  })
  /**
   * What this process started, in the order it started them, each with its stop (named for
   * the log line of one that does not end): `close` stops them in reverse, so a part stops
   * before what it was started on (a consumer before the bus, the bus before the projections).
   */
  const started: Array<[name: string, stop: () => Promise<void>]> = []
  /** Each part's reason not to be ready, or null. */
  const readiness: Array<() => NotReady | null> = []
  // A store that does not answer (PostgreSQL stopped, restarting, failing over): what needs it answers 503 meanwhile.
  for (const h of core.health)
    readiness.push(() => {
      const down = h.unreachable
      return down ? { component: h.store, problem: 'unreachable', detail: `${down.detail} (since ${new Date(down.since).toISOString()})` } : null
    })
  /** A subscription's readiness on /readyz (as `component`) and its lag behind the store in /metrics. */
  const watch = (component: string, part: { readonly notReady: Omit<NotReady, 'component'> | null }, position: () => number): void => {
    readiness.push(() => {
      const n = part.notReady
      return n === null ? null : { component, ...n }
    })
    // Counted, not subtracted: positions are not one per event in every store (KurrentDB's are byte offsets).
    metrics.watchLag(component, async () => await store.countAfter(position(), LAG_CAP))
  }

  let runner: ProjectionRunner | null = null
  if (parts.projections) {
    runner = new ProjectionRunner(store, PROJECTIONS, ctx.reads)
    await runner.start()
    const r = runner
    watch('projections', r, () => r.position)
    started.push(['projections', () => r.stop()])
  }

  const needsBus = parts.verifier || parts.webhooks || parts.mailer || parts.relay
  const bus = needsBus ? await openBus(config, logError, store, core.holds) : null
  if (bus) {
    started.push(['bus', () => bus.close()])
    metrics.watchRedeliveries(() => bus.redeliveries())
    // What the in-process bus keeps waiting or gave up (the event store's table): /metrics says how much and how old.
    const held = core.holds
    if (!config.nats_url && held) metrics.watchHeld(async () => await held.heldSummary())
  }

  // The flows' reactions begun and not finished: how many and how old, per flow (at most the relay's lag, 1,000 events, read a scrape).
  const holds = !config.nats_url ? core.holds : null
  let read: { at: number; flows: ReturnType<typeof flowsPending> } | null = null
  const flowsPending = async () =>
    pendingByFlow((await pendingFlows(store, await core.checkpoints.getCheckpoint('relay'), holds, FLOWS, ['flows'], new Date(), 1_000)).items, FLOWS, 'flows')
  // Both gauges of one scrape share one read.
  metrics.watchFlows(async () => {
    if (read === null || Date.now() - read.at > 1_000) read = { at: Date.now(), flows: flowsPending() }
    return await read.flows
  })

  const consumers: Array<{ stop: () => Promise<void>; readonly problem?: string | null }> = []
  /** A bus consumer started: watched for readiness, stopped before what it was started on. */
  const consume = async (name: string, starting: Promise<{ stop: () => Promise<void>; readonly problem?: string | null }>): Promise<void> => {
    const c = await starting
    consumers.push(c)
    started.push([name, () => c.stop()])
  }
  // A bus consumer whose subscription failed is renewed; meanwhile the role is not ready.
  readiness.push(() => {
    const down = consumers.find(c => (c.problem ?? null) !== null)
    return down ? { component: 'consumers', problem: 'resubscribing', detail: down.problem ?? null } : null
  })
  if (bus && parts.verifier) {
    const engine = buildEngine(config, proxyFailed)
    metrics.watchSmtp(() => engine.stats)
    // The egress self-test: its state on /readyz, /metrics and in a log line at each change; new live jobs are held while it fails.
    const egress = buildEgressMonitor(config, (state, previous) => {
      const routes = state.routes.map(r => ({ route: r.route, via: r.via, ok: r.ok, problem: r.problem, detail: r.detail, ms: r.ms }))
      if (state.ok) log.info({ egress: { dns: state.dns, routes } }, previous.checked_at === null ? 'egress: port 25 reachable' : 'egress: working again')
      else log.error({ egress: { problem: state.problem, dns: state.dns, routes } }, `egress: ${state.problem}`)
    })
    const hold = egress && {
      blocked: () => egress.blocked,
      hold_ms: config.verifier.egress_hold_ms,
      recheck_ms: Math.min(config.verifier.egress_test.interval_ms, 60_000)
    }
    if (egress) {
      void egress.start()
      started.push([
        'egress',
        async () => {
          egress.stop()
        }
      ])
      metrics.watchEgress(() => egress.state)
      readiness.push(() => egressNotReady(egress.state))
    }
    await consume(
      'verifier',
      startVerifierWorker(ctx, bus, engine, {
        concurrency: config.verifier.concurrency,
        greylist,
        reads: runner ? ctx.reads : undefined,
        metrics,
        ...(hold && { egress: hold })
      })
    )
    // Batches share the engine (its sessions per MX and its politeness) with single jobs.
    await consume(
      'batches',
      startBatchWorker(ctx, bus, engine, {
        // Parts share the sessions of their MX (the prober's lanes): many in flight cost little more than one.
        concurrency: 16,
        greylist,
        intake_idle_s: config.batch_intake_idle_s,
        sweep: true,
        metrics,
        ...(hold && { egress: hold }),
        log: logError
      })
    )
    // The intake process manager goes with the verifier: both keep jobs moving; so do the other flows.
    await consume('intake', startIntakeWorker(ctx, bus, { concurrency: 16, grace_ms: config.batch_chunk_grace_s * 1000 }))
    await consume('flows', startFlowWorker(ctx, bus, { concurrency: 16 }))
  }
  if (bus && parts.webhooks) {
    const w = config.webhooks
    await consume(
      'webhooks',
      startWebhookWorker(ctx, bus, sendWebhook, {
        policy: w,
        concurrency: w.concurrency,
        log: logError,
        metrics
      })
    )
  }
  if (bus && parts.mailer) {
    const mailer: Mailer = config.smtp_url
      ? new SmtpMailer(config.smtp_url, config.mail_from)
      : new OutboxMailer(join(config.data_dir, 'outbox'), config.mail_from, line => {
          log.info(line)
        })
    started.push(['mailer', () => mailer.close()])
    await consume('mailer_worker', startMailerWorker(ctx, bus, mailer))
  }
  // Customers' kept files (a list's original): in DATA_DIR on the embedded default, in PostgreSQL with DATABASE_URL, GridFS beside MongoDB's read models.
  const blobs: BlobStore | null =
    serveApi || parts.mailer
      ? config.database
        ? new (await import('./infra/blobs/postgres.ts')).PostgresBlobStore(config.database.url, { pool: core.database! })
        : config.mongodb_url
          ? await (await optionalAdapter('MONGODB_URL', 'mongodb', () => import('./infra/blobs/gridfs.ts'))).GridFsBlobStore.connect(config.mongodb_url)
          : new FileBlobStore(join(config.data_dir, 'blobs'))
      : null
  if (blobs) started.push(['blobs', () => blobs.close()])
  if (bus && blobs && parts.mailer) {
    // The mailer's role keeps the erasure of what customers leave behind: their kept files too.
    await consume(
      'blobs_worker',
      startBlobWorker(ctx, bus, blobs, {
        sweep_ms: config.list_files.sweep_s * 1000,
        sweep: runner !== null || role === 'worker:mailer',
        log: logError
      })
    )
  }

  let relay: Relay | null = null
  if (bus && parts.relay) {
    // In process, a publish is its consumers' work done: a small window is all it takes.
    relay = new Relay(store, bus, core.checkpoints, {
      event_types: [...new Set(Object.values(ROUTES).flat())],
      window: config.nats_url ? 4_096 : 256,
      log: (msg, err) => {
        if (err === undefined) log.info(msg)
        else log.error({ err }, msg)
      }
    })
    await relay.start()
    const r = relay
    watch('relay', r, () => r.checkpoint)
    started.push(['relay', () => r.stop()])
  }

  // The API screens sign-ups with its own engine (DNS and SMTP from this process).
  if (serveApi && config.signup_screening === 'full') {
    const screener = buildEngine(config, proxyFailed)
    ctx.screen = email => screener.verify(email, ['syntax', 'typo', 'disposable', 'dns', 'smtp'])
    metrics.watchSmtp(() => screener.stats)
  }
  // Not ready: `starting` while a part has yet to catch up once, `degraded` when a part that worked fails.
  const ready = (): Readiness => {
    const reasons = readiness.map(f => f()).filter((r): r is NotReady => r !== null)
    if (reasons.length === 0) return { status: 'ready', reasons }
    return { status: reasons.some(r => r.problem === 'starting' || r.problem === 'catching_up') ? 'starting' : 'degraded', reasons }
  }
  // Read your writes, bounded (5 s): an answer that gave up is marked and counted.
  const caughtUp = async (request: FastifyRequest | null, p: number): Promise<boolean> => {
    if (runner !== null && (await runner.waitFor(p))) return true
    metrics.readYourWritesTimeouts.inc()
    if (request !== null) answeredStale(request)
    return false
  }
  let rateCounter: RateCounter | null = null
  if (serveApi) {
    const counter: RateCounter = config.nats_url
      ? await (await import('./infra/ratelimit/nats-kv.ts')).NatsKvRateCounter.connect(config.nats_url, {
          prefix: config.nats.prefix,
          max_window_ms: config.rate_limit_window_s * 1000
        })
      : new InProcessRateCounter()
    rateCounter = counter
    started.push(['rate_counter', () => counter.close()])
  }
  const billing: Billing | null =
    serveApi && config.billing.stripe_secret_key
      ? await (await import('./infra/billing/stripe.ts')).StripeBilling.create({
          secret_key: config.billing.stripe_secret_key,
          webhook_secret: config.billing.stripe_webhook_secret,
          api_url: config.billing.stripe_api_url
        })
      : null
  const waits = runner ? new CompletionWaits(runner, config.waits) : null
  if (waits) metrics.watchWaits(() => waits.pending)
  const listFiles = serveApi ? new ListFileWork(config.list_files) : null
  if (listFiles) started.push(['list_files', () => listFiles.close()])
  const app = serveApi
    ? await buildApp(
        {
          ctx,
          caughtUp,
          ready,
          metrics,
          rate_counter: rateCounter!,
          billing,
          waits,
          blobs: blobs!,
          list_files: listFiles!,
          send_webhook: sendWebhook
        },
        { logger: false, logger_instance: log, instrument: options.instrument }
      )
    : await buildHealthApp(ready, metrics, config.metrics.token)
  app.addHook('onResponse', async (request, reply) => {
    // Through the request's logger: the line carries its request_id.
    request.log.info({ method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request')
  })
  // A burst of connections (a customer's program opening hundreds at once) waits in the
  // kernel's accept queue while the event loop is busy; Node's default of 511 overflows
  // under a burst, and a connection dropped from a full queue ends in a reset on the
  // client's side. The kernel caps this at net.core.somaxconn.
  const maxConnections = boundServer(app.server, config.http)
  const address = await app.listen({ host: config.host, port: config.port, backlog: LISTEN_BACKLOG })
  // Without PUBLIC_URL, the base URL is where this process listens (PORT 0 picks the port now).
  if (config.public_url === null) ctx.base_url = () => address.replace(/\/$/, '')
  const metricsServer = config.metrics.port === null ? null : await startMetricsServer(metrics, config.host, config.metrics.port)
  if (metricsServer) started.push(['metrics_server', () => metricsServer.close()])
  log.info(
    {
      url: address,
      metrics_url: metricsServer?.url ?? null,
      data_dir: config.data_dir,
      bus: config.nats_url ? 'nats' : 'in-process',
      max_connections: maxConnections
    },
    `${role} listening on ${address}`
  )
  let closed = false
  return {
    role,
    app,
    url: address,
    metrics,
    metrics_url: metricsServer?.url ?? null,
    core,
    runner,
    close: async () => {
      if (closed) return
      closed = true
      // Every step runs even when one before it failed: a failed step must not leave the
      // stores, timers and workers of the rest open (the process would never exit).
      const failures: unknown[] = []
      // The HTTP server first (no new request), then what was started, last first, then the stores.
      const steps: Array<[string, () => Promise<void>]> = [['http', () => app.close()], ...started.toReversed(), ['stores', () => core.close()]]
      for (const [name, step] of steps) {
        // A step that does not end keeps the process alive: it is named every 10 s until it does.
        const started = Date.now()
        const watchdog = setInterval(() => {
          // With what keeps the process alive (handle and request kinds: sockets, timers, files).
          log.warn({ step: name, waited_ms: Date.now() - started, resources: process.getActiveResourcesInfo() }, `shutdown: ${name} still closing`)
        }, SHUTDOWN_STEP_WARN_MS)
        watchdog.unref()
        try {
          await step()
        } catch (err) {
          log.error({ err, step: name }, 'shutdown step failed')
          failures.push(err)
        } finally {
          clearInterval(watchdog)
        }
      }
      if (failures.length > 0)
        throw new AggregateError(
          failures,
          `${failures.length} shutdown step(s) failed: ${failures.map(f => (f instanceof Error ? f.message : String(f))).join('; ')}`
        )
    }
  }
}

/** How often a shutdown step that has not ended is named in the log (ms). */
const SHUTDOWN_STEP_WARN_MS = 10_000

/** Connections the kernel may hold for the API before it accepts them (listen(2) backlog; capped by net.core.somaxconn). */
const LISTEN_BACKLOG = 4096

/** The all-in-one service (`svc serve`, what `npm start` runs). */
export async function startService(
  config: Config,
  options: { logger?: Logger; instrument?: AppOptions['instrument']; now?: () => Date } = {}
): Promise<Service> {
  return await startRole('serve', config, options)
}
