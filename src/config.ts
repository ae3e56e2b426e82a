import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { resolve } from 'node:path'
import { z } from 'zod'
import ipaddr from 'ipaddr.js'
import { parsePlanCatalogue, type PlanCatalogue } from './domain/plans.ts'
import { parseSocksUrl, type EgressRoute, type SocksProxy } from './verifier/egress.ts'

/** The plan catalogue shipped with the service. */
export const DEFAULT_PLANS_FILE = new URL('../config/plans.json', import.meta.url).pathname

/**
 * Reads and checks a plan catalogue file (JSON; the domain's `parsePlanCatalogue` checks it).
 * @throws Error naming the file: unreadable, not JSON, or an invalid field.
 */
export function loadPlanCatalogue(file: string = DEFAULT_PLANS_FILE): PlanCatalogue {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new Error(`plans file ${file}: ${(err as Error).message}`)
  }
  return parsePlanCatalogue(raw, file)
}

/** A `socks5://[user:password@]host:port` URL, parsed (see `parseSocksUrl`). */
const socksUrl = z.string().transform((v, ctx): SocksProxy => {
  try {
    return parseSocksUrl(v)
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message })
    return z.NEVER
  }
})

/** One routing route of `VERIFIER_SMTP_ROUTES` (the default route is built from the other variables). */
const RouteSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9_-]{1,32}$/, 'a short name: a-z, 0-9, _ and -'),
    proxy: socksUrl.nullable().default(null),
    helo_name: z.string().min(1).optional(),
    mail_from: z.string().min(3).optional(),
    providers: z.array(z.string().min(1)).default([]),
    mx: z.array(z.string().regex(/^[a-z0-9.*-]+$/i, 'a host pattern (* for any characters)')).default([])
  })
  .strict()
  .refine(r => r.providers.length > 0 || r.mx.length > 0, 'a route names the providers or MX patterns it carries')

/**
 * `TRUST_PROXY`: the proxies whose `X-Forwarded-For` (and `-Proto`, `-Host`) is believed, as
 * fastify's `trustProxy` reads a list: comma-separated addresses, CIDR ranges and the names
 * `loopback`, `linklocal`, `uniquelocal` (proxy-addr's). The client is the first address,
 * from the right, that is not one of them. Unset, empty or `false`: nobody (the peer's own
 * address is the client). `true` is refused (any client could name its own address), and so
 * is a hop count (fastify no longer honours one: it cannot tell a proxy from a client).
 */
const trustProxy = z
  .string()
  .optional()
  .transform((v, ctx): false | string[] => {
    const value = (v ?? '').trim()
    if (value === '' || value === 'false') return false
    if (/^\d+$/.test(value)) {
      ctx.addIssue({ code: 'custom', message: "a hop count cannot tell a proxy from a client: name the proxies' addresses or CIDR ranges" })
      return z.NEVER
    }
    if (value === 'true') {
      ctx.addIssue({ code: 'custom', message: "true would believe any client's X-Forwarded-For: name the proxies (addresses, CIDRs) or a hop count" })
      return z.NEVER
    }
    const entries = value.split(',').map(e => e.trim())
    const wrong = entries.filter(e => !['loopback', 'linklocal', 'uniquelocal'].includes(e) && !isAddressOrRange(e))
    if (wrong.length > 0) {
      ctx.addIssue({ code: 'custom', message: `not an address, a CIDR range, loopback, linklocal or uniquelocal: ${wrong.join(', ').slice(0, 200)}` })
      return z.NEVER
    }
    return entries
  })

/** An IPv4 or IPv6 address, or a CIDR range of either (`10.0.0.0/8`, `fd00::/8`). */
function isAddressOrRange(value: string): boolean {
  if (ipaddr.isValid(value)) return true
  try {
    ipaddr.parseCIDR(value)
    return true
  } catch {
    return false
  }
}

const intFromEnv = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def)

const dnsServer = z.string().regex(/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\])(:\d{1,5})?$/, 'expected ip[:port] or [ipv6]:port')

/**
 * Configuration from the environment (docs/design/architecture.md "Configuration"); every variable is
 * optional for the embedded default. This is the only module that reads `process.env`.
 */
export const ConfigSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: intFromEnv(8080, 0, 65535),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_URL: z.string().url().optional(),
  TRUST_PROXY: trustProxy,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SMTP_URL: z.string().url().optional(),
  SIGNUP_SCREENING: z.enum(['full', 'lists']).default('full'),
  EVENTSTORE_URL: z
    .string()
    .regex(
      /^(esdb|esdb\+discover|kurrentdb|kurrentdb\+discover|kdb|kdb\+discover):\/\/\S+$/,
      'expected kurrentdb://host:port[?tls=false] (esdb:// is read as kurrentdb://)'
    )
    .optional(),
  MONGODB_URL: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\/\S+$/, 'expected mongodb://host:port/database')
    .optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'expected postgres://user@host:5432/database')
    .optional(),
  DATABASE_POOL_SIZE: intFromEnv(8, 1, 200),
  NATS_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,30}$/)
    .default('svc'),
  NATS_ACK_WAIT_MS: intFromEnv(30_000, 500, 3_600_000),
  NATS_URL: z
    .string()
    .regex(/^nats:\/\/\S+$/, 'expected nats://host:port[,nats://…]')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Email Verification <no-reply@localhost>'),
  JWT_ISSUER: z.string().min(1).default('email-verification-service'),
  ACCESS_TOKEN_TTL_S: intFromEnv(900, 60, 86_400),
  REFRESH_TOKEN_TTL_S: intFromEnv(30 * 86_400, 300, 365 * 86_400),
  REFRESH_TOKEN_REUSE_GRACE_S: intFromEnv(10, 0, 60),
  VERIFIER_DNS_SERVERS: z
    .string()
    .optional()
    .transform(v =>
      (v ?? '')
        .split(',')
        .map(s => s.trim())
        .filter(Boolean)
    )
    .pipe(z.array(dnsServer)),
  VERIFIER_SMTP_PORT: intFromEnv(25, 1, 65535),
  VERIFIER_HELO_NAME: z.string().min(1).optional(),
  VERIFIER_MAIL_FROM: z.string().min(3).optional(),
  VERIFIER_SMTP_TIMEOUT_MS: intFromEnv(10_000, 50, 600_000),
  VERIFIER_PIPELINE_RCPT: intFromEnv(10, 1, 100),
  VERIFIER_DNS_TIMEOUT_MS: intFromEnv(5_000, 50, 60_000),
  VERIFIER_CONCURRENCY: intFromEnv(64, 1, 4096),
  VERIFIER_GREYLIST_RETRY_S: z.coerce.number().positive().max(86_400).default(60),
  VERIFIER_GREYLIST_DEADLINE_S: z.coerce
    .number()
    .positive()
    .max(7 * 86_400)
    .default(1_800),
  VERIFIER_PUSHBACK_DEADLINE_S: z.coerce.number().positive().max(86_400).default(300),
  VERIFIER_RESULT_CACHE_TTL_S: z.coerce
    .number()
    .min(0)
    .max(30 * 86_400)
    .default(3_600),
  VERIFIER_CATCH_ALL_TTL_S: z.coerce
    .number()
    .min(0)
    .max(30 * 86_400)
    .default(6 * 3_600),
  VERIFIER_MAX_SESSIONS_PER_MX: intFromEnv(1, 1, 100),
  VERIFIER_MAX_SESSIONS_PER_IP: intFromEnv(6, 1, 100),
  VERIFIER_MAX_SESSIONS: intFromEnv(256, 1, 10_000),
  VERIFIER_STARTTLS: z.enum(['true', 'false']).default('true'),
  VERIFIER_ALLOW_PRIVATE_TARGETS: z.enum(['true', 'false']).default('false'),
  VERIFIER_SMTP_PROXY: socksUrl.optional(),
  VERIFIER_SMTP_ROUTES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return []
      try {
        return JSON.parse(v) as unknown
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `not JSON: ${(err as Error).message}` })
        return z.NEVER
      }
    })
    .pipe(z.array(RouteSchema).max(64))
    .refine(
      routes => new Set(routes.map(r => r.name)).size === routes.length && !routes.some(r => r.name === 'default'),
      'route names must be unique and not "default"'
    ),
  VERIFIER_EGRESS_TEST_INTERVAL_S: z.coerce.number().min(0).max(86_400).default(300),
  VERIFIER_EGRESS_TEST_MX: z
    .string()
    .regex(/^[a-z0-9.-]+$/i, 'a host name')
    .default('gmail-smtp-in.l.google.com'),
  VERIFIER_EGRESS_HOLD_S: z.coerce
    .number()
    .min(0)
    .max(7 * 86_400)
    .default(3_600),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z.enum(['true', 'false']).default('false'),
  WEBHOOK_TIMEOUT_MS: intFromEnv(10_000, 50, 60_000),
  WEBHOOK_MAX_ATTEMPTS: intFromEnv(6, 1, 20),
  WEBHOOK_RETRY_BASE_MS: intFromEnv(30_000, 10, 3_600_000),
  WEBHOOK_DISABLE_AFTER_FAILURES: intFromEnv(5, 1, 1_000),
  WEBHOOK_CONCURRENCY: intFromEnv(16, 1, 1_024),
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  COMMAND_BATCH_MAX: intFromEnv(256, 1, 10_000),
  COMMAND_DEADLINE_MS: intFromEnv(30_000, 100, 600_000),
  IDEMPOTENCY_KEY_TTL_S: intFromEnv(86_400, 60, 30 * 86_400),
  // Test-only: the named step of a flow kills the process (SIGKILL) when it is reached.
  FAULT_POINT: z
    .string()
    .regex(/^[a-z_]+\.[a-z_]+$/)
    .optional(),
  PLANS_FILE: z.string().min(1).optional(),
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_\S+$/, 'expected sk_test_…, sk_live_… or a restricted key')
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\S+$/, 'expected whsec_…')
    .optional(),
  STRIPE_API_URL: z.string().url().optional(),
  RATE_LIMIT_WINDOW_S: intFromEnv(60, 1, 3_600),
  PUBLIC_RATE_LIMIT_PER_MINUTE: intFromEnv(600, 1, 1_000_000),
  WAITS_PER_ACCOUNT: intFromEnv(32, 0, 100_000),
  WAITS_PER_PROCESS: intFromEnv(2_000, 0, 1_000_000),
  HTTP_MAX_CONNECTIONS: intFromEnv(8_192, 16, 1_000_000),
  HTTP_REQUEST_TIMEOUT_S: intFromEnv(300, 1, 86_400),
  REGISTRATIONS_PER_HOUR_PER_CLIENT: intFromEnv(30, 1, 1_000_000),
  REGISTRATIONS_PER_HOUR_PER_DOMAIN: intFromEnv(200, 1, 1_000_000),
  REGISTRATIONS_PER_HOUR: intFromEnv(5_000, 1, 100_000_000),
  BATCH_INTAKE_IDLE_S: z.coerce
    .number()
    .positive()
    .max(30 * 86_400)
    .default(86_400),
  LIST_FILE_RETENTION_DAYS: z.coerce.number().positive().max(3_650).default(30),
  LIST_FILE_SWEEP_S: z.coerce.number().positive().max(86_400).default(3_600),
  LIST_FILE_THREADS: intFromEnv(2, 1, 64),
  LIST_FILE_QUEUE: intFromEnv(16, 0, 10_000),
  LIST_FILE_PER_ACCOUNT: intFromEnv(2, 1, 100),
  LIST_FILE_HEAP_MB: intFromEnv(256, 32, 16_384),
  LIST_FILE_IDLE_S: z.coerce.number().positive().max(3_600).default(30),
  BATCH_CHUNK_GRACE_S: z.coerce.number().positive().max(86_400).default(120)
})

export interface Config {
  host: string
  port: number
  data_dir: string
  public_url: string | null
  /** Whose `X-Forwarded-For` is believed (fastify's `trustProxy`): nobody (false), or the proxies' addresses and ranges. */
  trust_proxy: false | string[]
  log_level: string
  smtp_url: string | null
  /** `full`: sign-ups are checked by the engine (DNS, SMTP); `lists`: syntax and disposable lists only. */
  signup_screening: 'full' | 'lists'
  nats_url: string | null
  eventstore_url: string | null
  mongodb_url: string | null
  /** PostgreSQL for events, read models and kept files (`DATABASE_URL`), with its pool size per store. */
  database: { url: string; pool_size: number } | null
  /** Prefix of JetStream streams and subjects; ack wait before redelivery (ms). */
  nats: { prefix: string; ack_wait_ms: number }
  mail_from: string
  jwt_issuer: string
  access_token_ttl_s: number
  refresh_token_ttl_s: number
  /**
   * How long (s) after a rotation the token it replaced may be presented again for a fresh
   * token of its own instead of revoking the session (two tabs refreshing at once); 0: never.
   */
  refresh_token_reuse_grace_s: number
  verifier: {
    dns_servers: string[]
    smtp_port: number
    helo_name: string
    mail_from: string
    smtp_timeout_ms: number
    /** RCPT TO commands per write when the server announces PIPELINING (RFC 2920); 1 asks one at a time. */
    pipeline_rcpt: number
    dns_timeout_ms: number
    concurrency: number
    greylist_retry_ms: number
    greylist_deadline_ms: number
    /** How long the engine keeps asking a receiver that pushed back (421, 4.7.x, a recipient rate limit), ms. */
    pushback_deadline_ms: number
    result_cache_ttl_ms: number
    catch_all_ttl_ms: number
    max_sessions_per_mx: number
    /** Concurrent sessions per receiver IP address, whatever MX names lead there (shared hosting). */
    max_sessions_per_ip: number
    max_sessions: number
    starttls: boolean
    /** Probe MX hosts on non-public addresses (tests with a loopback mail world, on-prem); off: never connected to. */
    allow_private_targets: boolean
    /** The egress routes to port 25 in order, the default route (`VERIFIER_SMTP_PROXY` or direct) last. */
    routes: EgressRoute[]
    /** The egress self-test: every `interval_ms` (0: off), each route to `mx` (DNS, TCP port 25, a banner). */
    egress_test: { interval_ms: number; mx: string }
    /** How long a new live job is held (`deferred`) while egress is blocked, after it was queued (ms); then it runs anyway. */
    egress_hold_ms: number
  }
  commands: {
    /** Commands on one stream decided together and appended in one append (group commit), at most. */
    batch_max: number
    /** How long a command keeps retrying a stream that other processes keep changing (ms). */
    deadline_ms: number
    /** How long an `Idempotency-Key` is kept (s). */
    idempotency_key_ttl_s: number
  }
  /** `GET /metrics`: a bearer token on the main port, and/or a port of its own without one; neither: not served. */
  metrics: { token: string | null; port: number | null }
  /** The plan grid and top-up packs (`PLANS_FILE`, default `config/plans.json`). */
  plans: PlanCatalogue
  /**
   * Stripe (`STRIPE_SECRET_KEY`, `STRIPE_WEBHOOK_SECRET`): without the secret key, checkout
   * and portal answer 503 and everything else works. `api_url` points the SDK elsewhere
   * than api.stripe.com (tests: a local server answering Stripe's documented shapes).
   */
  billing: { stripe_secret_key: string | null; stripe_webhook_secret: string | null; stripe_api_url: string | null }
  /** The window of per-key and per-agent rate limits (s); the plan's limit counts per window of 60 s by default. */
  rate_limit_window_s: number
  /** Requests a minute per client address on the public reads (no credential: configuration, metadata, health) and sign-out. */
  public_rate_limit_per_minute: number
  /**
   * Reads waiting with `?wait=` held at once by this process: per account (all its
   * credentials together) and in all; a read past either is answered at once, as `wait=0`.
   */
  waits: { per_account: number; per_process: number }
  /**
   * What one API process holds of its clients: connections at once (more are closed as they
   * come; lowered to the descriptors the process may open), and how long a request may take
   * to arrive whole (s).
   */
  http: { max_connections: number; request_timeout_s: number }
  /** Registrations an hour: per client address, per address domain, and in all (429 past them). */
  registrations_per_hour: { client: number; domain: number; all: number }
  /** A batch's intake closes after this long without a chunk (s; `BATCH_INTAKE_IDLE_S`, default 24 h). */
  batch_intake_idle_s: number
  /**
   * Days a list's file is kept beside its batch (`LIST_FILE_RETENTION_DAYS`, default 30), and how often expired ones are removed (s; `LIST_FILE_SWEEP_S`, default 1 h);
   * the threads that read and merge them (`LIST_FILE_THREADS`, 2), the tasks that may wait for one (`LIST_FILE_QUEUE`, 16), an account's at once
   * (`LIST_FILE_PER_ACCOUNT`, 2), each thread's heap (MiB; `LIST_FILE_HEAP_MB`, 256), and how long an idle thread stays (s; `LIST_FILE_IDLE_S`, 30).
   */
  list_files: { retention_days: number; sweep_s: number; threads: number; queue: number; per_account: number; heap_mb: number; idle_s: number }
  /** A chunk's reservation whose chunk did not appear this long after it was made is released (s; `BATCH_CHUNK_GRACE_S`, default 120). */
  batch_chunk_grace_s: number
  /** Test-only fault injection: the step (`submit.after_reserve`, …) at which the process kills itself. */
  fault_point: string | null
  webhooks: {
    /** Allow targets on loopback, private and other non-public ranges, and plain `http:` (tests, on-prem). */
    allow_private_targets: boolean
    /** Per attempt: connect, send and first response byte (ms). */
    timeout_ms: number
    /** Attempts per delivery, the first included. */
    max_attempts: number
    /** Delay before the second attempt (ms); each later one waits 4× longer (plus up to 10% jitter). */
    retry_base_ms: number
    /** Consecutive deliveries that failed every attempt before an endpoint is disabled. */
    disable_after_failures: number
    /** Deliveries in flight per worker process. */
    concurrency: number
  }
}

/**
 * Parses the environment into a Config.
 * @throws Error listing every invalid variable (the process should exit with it).
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = ConfigSchema.safeParse(env)
  if (!parsed.success) {
    const lines = parsed.error.issues.map(i => `  ${i.path.join('.')}: ${i.message}`)
    throw new Error(`invalid configuration:\n${lines.join('\n')}`)
  }
  const c = parsed.data
  if (c.DATABASE_URL && (c.EVENTSTORE_URL || c.MONGODB_URL))
    throw new Error(
      'invalid configuration:\n  DATABASE_URL: PostgreSQL holds events, read models and kept files; unset EVENTSTORE_URL and MONGODB_URL, or DATABASE_URL'
    )
  const helo = c.VERIFIER_HELO_NAME ?? (hostname().includes('.') ? hostname() : `${hostname()}.localdomain`)
  return {
    host: c.HOST,
    port: c.PORT,
    data_dir: resolve(c.DATA_DIR),
    public_url: c.PUBLIC_URL ?? null,
    trust_proxy: c.TRUST_PROXY,
    log_level: c.LOG_LEVEL,
    smtp_url: c.SMTP_URL ?? null,
    signup_screening: c.SIGNUP_SCREENING,
    nats_url: c.NATS_URL ?? null,
    eventstore_url: c.EVENTSTORE_URL ?? null,
    mongodb_url: c.MONGODB_URL ?? null,
    database: c.DATABASE_URL ? { url: c.DATABASE_URL, pool_size: c.DATABASE_POOL_SIZE } : null,
    nats: { prefix: c.NATS_PREFIX, ack_wait_ms: c.NATS_ACK_WAIT_MS },
    mail_from: c.MAIL_FROM,
    jwt_issuer: c.JWT_ISSUER,
    access_token_ttl_s: c.ACCESS_TOKEN_TTL_S,
    refresh_token_ttl_s: c.REFRESH_TOKEN_TTL_S,
    refresh_token_reuse_grace_s: c.REFRESH_TOKEN_REUSE_GRACE_S,
    verifier: {
      dns_servers: c.VERIFIER_DNS_SERVERS,
      smtp_port: c.VERIFIER_SMTP_PORT,
      helo_name: helo,
      mail_from: c.VERIFIER_MAIL_FROM ?? `verify@${helo}`,
      smtp_timeout_ms: c.VERIFIER_SMTP_TIMEOUT_MS,
      pipeline_rcpt: c.VERIFIER_PIPELINE_RCPT,
      dns_timeout_ms: c.VERIFIER_DNS_TIMEOUT_MS,
      concurrency: c.VERIFIER_CONCURRENCY,
      greylist_retry_ms: Math.round(c.VERIFIER_GREYLIST_RETRY_S * 1000),
      greylist_deadline_ms: Math.round(c.VERIFIER_GREYLIST_DEADLINE_S * 1000),
      pushback_deadline_ms: Math.round(c.VERIFIER_PUSHBACK_DEADLINE_S * 1000),
      result_cache_ttl_ms: Math.round(c.VERIFIER_RESULT_CACHE_TTL_S * 1000),
      catch_all_ttl_ms: Math.round(c.VERIFIER_CATCH_ALL_TTL_S * 1000),
      max_sessions_per_mx: c.VERIFIER_MAX_SESSIONS_PER_MX,
      max_sessions_per_ip: c.VERIFIER_MAX_SESSIONS_PER_IP,
      max_sessions: c.VERIFIER_MAX_SESSIONS,
      starttls: c.VERIFIER_STARTTLS === 'true',
      allow_private_targets: c.VERIFIER_ALLOW_PRIVATE_TARGETS === 'true',
      routes: [
        ...c.VERIFIER_SMTP_ROUTES.map(r => ({
          name: r.name,
          proxy: r.proxy,
          helo_name: r.helo_name ?? helo,
          mail_from: r.mail_from ?? c.VERIFIER_MAIL_FROM ?? `verify@${r.helo_name ?? helo}`,
          providers: r.providers,
          mx: r.mx
        })),
        { name: 'default', proxy: c.VERIFIER_SMTP_PROXY ?? null, helo_name: helo, mail_from: c.VERIFIER_MAIL_FROM ?? `verify@${helo}`, providers: [], mx: [] }
      ],
      egress_test: { interval_ms: Math.round(c.VERIFIER_EGRESS_TEST_INTERVAL_S * 1000), mx: c.VERIFIER_EGRESS_TEST_MX },
      egress_hold_ms: Math.round(c.VERIFIER_EGRESS_HOLD_S * 1000)
    },
    commands: { batch_max: c.COMMAND_BATCH_MAX, deadline_ms: c.COMMAND_DEADLINE_MS, idempotency_key_ttl_s: c.IDEMPOTENCY_KEY_TTL_S },
    fault_point: c.FAULT_POINT ?? null,
    plans: loadPlanCatalogue(c.PLANS_FILE ? resolve(c.PLANS_FILE) : DEFAULT_PLANS_FILE),
    billing: {
      stripe_secret_key: c.STRIPE_SECRET_KEY ?? null,
      stripe_webhook_secret: c.STRIPE_WEBHOOK_SECRET ?? null,
      stripe_api_url: c.STRIPE_API_URL ?? null
    },
    rate_limit_window_s: c.RATE_LIMIT_WINDOW_S,
    public_rate_limit_per_minute: c.PUBLIC_RATE_LIMIT_PER_MINUTE,
    waits: { per_account: c.WAITS_PER_ACCOUNT, per_process: c.WAITS_PER_PROCESS },
    http: { max_connections: c.HTTP_MAX_CONNECTIONS, request_timeout_s: c.HTTP_REQUEST_TIMEOUT_S },
    registrations_per_hour: { client: c.REGISTRATIONS_PER_HOUR_PER_CLIENT, domain: c.REGISTRATIONS_PER_HOUR_PER_DOMAIN, all: c.REGISTRATIONS_PER_HOUR },
    batch_intake_idle_s: c.BATCH_INTAKE_IDLE_S,
    batch_chunk_grace_s: c.BATCH_CHUNK_GRACE_S,
    list_files: {
      retention_days: c.LIST_FILE_RETENTION_DAYS,
      sweep_s: c.LIST_FILE_SWEEP_S,
      threads: c.LIST_FILE_THREADS,
      queue: c.LIST_FILE_QUEUE,
      per_account: c.LIST_FILE_PER_ACCOUNT,
      heap_mb: c.LIST_FILE_HEAP_MB,
      idle_s: c.LIST_FILE_IDLE_S
    },
    metrics: { token: c.METRICS_TOKEN ?? null, port: c.METRICS_PORT ?? null },
    webhooks: {
      allow_private_targets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true',
      timeout_ms: c.WEBHOOK_TIMEOUT_MS,
      max_attempts: c.WEBHOOK_MAX_ATTEMPTS,
      retry_base_ms: c.WEBHOOK_RETRY_BASE_MS,
      disable_after_failures: c.WEBHOOK_DISABLE_AFTER_FAILURES,
      concurrency: c.WEBHOOK_CONCURRENCY
    }
  }
}
