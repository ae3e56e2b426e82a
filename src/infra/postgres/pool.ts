import pg from 'pg'
import { StoreUnavailableError, type StoreHealth } from '../../ports/store-unavailable.ts'

/** SQLSTATE codes that say the server cannot serve this connection now (PostgreSQL, Appendix A). */
const UNAVAILABLE_STATES = new Set([
  // Class 57: the server is shutting down, crashed, or is starting (or still recovering).
  '57P01',
  '57P02',
  '57P03',
  // Class 53: out of connection slots.
  '53300',
  // A standby (still in recovery, as during a failover) refuses writes.
  '25006'
])
/** Node's socket errors of an unreachable or lost server. */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED'])
/** node-postgres's own messages for a connection that ended, could not be made in time, or a query that got no answer in time. */
const CLIENT_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|the database system is (starting up|shutting down|in recovery)/

/**
 * Whether `err` says the server could not be reached or lost the connection (SQLSTATE class
 * 08 and the codes above, socket errors, node-postgres's connection messages), as opposed
 * to a refused statement (a constraint, a syntax error) which is the caller's to handle.
 */
export function connectionLost(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_STATES.has(code) || SOCKET_ERRORS.has(code))) return true
  if (err instanceof AggregateError) return err.errors.some(connectionLost)
  return CLIENT_MESSAGES.test(err.message)
}

export interface StorePoolOptions {
  /** Connections at most (`DATABASE_POOL_SIZE`). */
  max: number
  /** The schema the connections work in (`search_path`). */
  schema: string
  /** How long a connection may take to open, and a query waits for a free one (ms). */
  connect_timeout_ms?: number
  /** How long a query may wait for its answer before the connection is given up (ms); bounds a hang on a silent network. */
  query_timeout_ms?: number
}

/**
 * The pool every PostgreSQL store of a process shares (events, read models, kept files):
 * at most `max` connections, each opened within `connect_timeout_ms` (default 5 s) and
 * kept alive by TCP keepalives. A connection failure (see `connectionLost`) surfaces as
 * `StoreUnavailableError`, from `query` and from queries on a client taken with `connect`;
 * any other error as it is. `health` says whether the server answered the last query; while
 * it does not, a `SELECT 1` every second finds out when it answers again, with or without
 * traffic. A connection the server ends (a restart, a failover) fails the query it was
 * running and is dropped; it never ends the process.
 */
export class StorePool extends pg.Pool implements StoreHealth {
  readonly store = 'postgresql'
  private down: { since: number; detail: string } | null = null
  private probe: NodeJS.Timeout | null = null

  constructor(url: string, options: StorePoolOptions) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) throw new Error(`schema ${options.schema}: a lower-case SQL identifier`)
    super({
      connectionString: url,
      max: options.max,
      options: `-c search_path=${options.schema}`,
      connectionTimeoutMillis: options.connect_timeout_ms ?? 5_000,
      query_timeout: options.query_timeout_ms ?? 60_000,
      keepAlive: true
    })
    // An idle connection that fails is dropped by the pool; the next query opens another.
    this.on('error', () => {})
    this.on('connect', client => {
      client.on('error', () => {})
      // Queries on a client taken with `connect()` (transactions): their connection failures are translated too.
      const raw = client.query.bind(client) as (...args: unknown[]) => unknown
      ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const result = raw(...args)
        return result instanceof Promise ? result.catch((err: unknown) => this.fail(err)) : result
      }
    })
  }

  /** Whether the server answered the last query, and if not since when and why. */
  get unreachable(): { since: number; detail: string } | null {
    return this.down
  }

  /** Rows of `sql` with `params` (the promise form only). @throws StoreUnavailableError when the server cannot be reached. */
  override query = (async (sql: string, params?: unknown[]) => {
    try {
      const r = await super.query(sql, params)
      this.reached()
      return r
    } catch (err) {
      return this.fail(err)
    }
  }) as unknown as pg.Pool['query']

  /** A client of the pool (release it). @throws StoreUnavailableError when no connection can be made. */
  override connect = ((callback?: (...args: unknown[]) => void) => {
    // The callback form is the pool's own (its `query` takes a client that way): left as it is.
    if (typeof callback === 'function') return super.connect(callback as never)
    return this.acquire()
  }) as unknown as pg.Pool['connect']

  private async acquire(): Promise<pg.PoolClient> {
    try {
      const c = await super.connect()
      this.reached()
      return c
    } catch (err) {
      return this.fail(err)
    }
  }

  private reached(): void {
    this.down = null
    if (this.probe) clearInterval(this.probe)
    this.probe = null
  }

  /** Rethrows `err`: as StoreUnavailableError (recorded for `health`) when it is a connection failure. */
  private fail(err: unknown): never {
    if (!connectionLost(err)) throw err
    const detail = err instanceof Error ? err.message || (err as { code?: string }).code || 'unreachable' : String(err)
    this.down ??= { since: Date.now(), detail }
    if (!this.probe && !this.ending) {
      this.probe = setInterval(() => {
        this.query('SELECT 1').catch(() => {})
      }, 1_000)
      this.probe.unref()
    }
    throw new StoreUnavailableError(this.store, detail, { cause: err })
  }

  override async end(): Promise<void> {
    if (this.probe) clearInterval(this.probe)
    this.probe = null
    await super.end()
  }
}
