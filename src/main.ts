import { join } from 'node:path'
import { mkdirSync } from 'node:fs'
import { pino, type Logger } from 'pino'
import type { FastifyInstance } from 'fastify'
import type { Config } from './config.ts'
import { SqliteEventStore } from './infra/eventstore/sqlite.ts'
import { MemoryReadStore } from './infra/readstore/memory.ts'
import { InProcessBus } from './infra/bus/in-process.ts'
import { SqliteDataKeyStore } from './infra/crypto/keystore.ts'
import { Sealer } from './infra/crypto/sealer.ts'
import { loadSecrets } from './infra/crypto/secrets.ts'
import { OutboxMailer, SmtpMailer } from './infra/mail/nodemailer.ts'
import type { Mailer } from './infra/mail/port.ts'
import { defaultClockAndIds, type CommandContext } from './commands/context.ts'
import { ProjectionRunner } from './projections/runner.ts'
import { usersProjection } from './projections/users.ts'
import { apiKeysProjection } from './projections/api-keys.ts'
import { jobsProjection } from './projections/jobs.ts'
import { walletsProjection } from './projections/wallets.ts'
import { Relay } from './workers/relay.ts'
import { startVerifierWorker } from './workers/verifier-worker.ts'
import { startMailerWorker } from './workers/mailer-worker.ts'
import { VerificationEngine } from './verifier/engine.ts'
import { CachingMailResolver, DnsClient } from './verifier/dns.ts'
import { DEFAULT_POLITENESS } from './verifier/politeness.ts'
import { buildApp } from './http/app.ts'

/** The verification engine as configured (VERIFICATION.md; `VERIFIER_*` variables). */
export function buildEngine (config: Config): VerificationEngine {
  const v = config.verifier
  return new VerificationEngine({
    resolver: new CachingMailResolver(new DnsClient({ servers: v.dns_servers, timeout_ms: v.dns_timeout_ms })),
    probe: { port: v.smtp_port, helo_name: v.helo_name, mail_from: v.mail_from, timeout_ms: v.smtp_timeout_ms, starttls: v.starttls },
    politeness: { ...DEFAULT_POLITENESS, max_sessions_per_host: v.max_sessions_per_mx, burst_per_host: v.max_sessions_per_mx, max_sessions: v.max_sessions },
    result_cache_ttl_ms: v.result_cache_ttl_ms,
    catch_all_ttl_ms: v.catch_all_ttl_ms,
    greylist: { retry_ms: v.greylist_retry_ms, deadline_ms: v.greylist_deadline_ms }
  })
}

export const PROJECTIONS = [usersProjection, apiKeysProjection, jobsProjection, walletsProjection]

/** The event types the relay publishes: those some worker consumes. */
const RELAYED = ['JobQueued', 'JobDeferred', 'ConfirmationCodeIssued']

export interface Core {
  ctx: CommandContext
  store: SqliteEventStore
  keys: SqliteDataKeyStore
  close (): Promise<void>
}

/**
 * Opens the write side on the embedded default: the SQLite event store
 * (`DATA_DIR/events.db`), the data key store (`DATA_DIR/keys.db`), secrets and an empty
 * in-memory read store. Used by the service and by operator commands.
 */
export async function openCore (config: Config): Promise<Core> {
  mkdirSync(config.data_dir, { recursive: true })
  const secrets = await loadSecrets(config.data_dir)
  const store = new SqliteEventStore(join(config.data_dir, 'events.db'))
  const keys = new SqliteDataKeyStore(join(config.data_dir, 'keys.db'), secrets.master_key)
  const ctx: CommandContext = { store, reads: new MemoryReadStore(), sealer: new Sealer(keys), secrets, config, ...defaultClockAndIds() }
  return { ctx, store, keys, close: async () => { await store.close(); await keys.close() } }
}

export interface Service {
  app: FastifyInstance
  url: string
  core: Core
  runner: ProjectionRunner
  close (): Promise<void>
}

/**
 * Starts the all-in-one service (`svc serve`): projections rebuilt from the event store,
 * the relay and in-process bus, the verifier and mailer workers, and the HTTP API.
 * Resolves once it listens; `close` stops it gracefully (HTTP first, then workers).
 */
export async function startService (config: Config, options: { logger?: Logger } = {}): Promise<Service> {
  const log = options.logger ?? pino({ level: config.log_level })
  const core = await openCore(config)
  const { ctx, store } = core
  const runner = new ProjectionRunner(store, PROJECTIONS, { store: ctx.reads, sealer: ctx.sealer })
  await runner.start()

  const bus = new InProcessBus((msg, err) => { log.error({ err }, msg) })
  const mailer: Mailer = config.smtp_url
    ? new SmtpMailer(config.smtp_url, config.mail_from)
    : new OutboxMailer(join(config.data_dir, 'outbox'), config.mail_from, line => { log.info(line) })
  const engine = buildEngine(config)
  const consumers = [
    await startVerifierWorker(ctx, bus, engine, { concurrency: config.verifier.concurrency, greylist: { retry_ms: config.verifier.greylist_retry_ms, deadline_ms: config.verifier.greylist_deadline_ms }, reads: ctx.reads }),
    await startMailerWorker(ctx, bus, mailer)
  ]
  const relay = new Relay(store, bus, store, { event_types: RELAYED })
  await relay.start()

  const app = await buildApp({ ctx, caughtUp: p => runner.waitFor(p), ready: () => runner.ready }, { logger: false })
  app.addHook('onResponse', async (request, reply) => {
    log.info({ method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request')
  })
  const address = await app.listen({ host: config.host, port: config.port })
  log.info({ url: address, data_dir: config.data_dir }, `listening on ${address}`)
  let closed = false
  return {
    app,
    url: address,
    core,
    runner,
    close: async () => {
      if (closed) return
      closed = true
      await app.close()
      await relay.stop()
      for (const c of consumers) await c.stop()
      await bus.close()
      await runner.stop()
      await mailer.close()
      await core.close()
    }
  }
}
