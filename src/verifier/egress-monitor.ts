import type { DnsClient } from './dns.ts'
import { describeProxy, type EgressRoute } from './egress.ts'
import { SmtpSession, SmtpSessionError } from './smtp-client.ts'

/** Why egress is not working: the resolvers do not answer, port 25 does not open, or a route's proxy fails. */
/** What the egress self-test can find wrong (`/readyz`'s `problem` for the `egress` component). */
export const EGRESS_PROBLEMS = ['dns_failing', 'port_25_blocked', 'proxy_failing'] as const
type EgressProblem = (typeof EGRESS_PROBLEMS)[number]

/** What the last self-test found for one route. */
interface RouteHealth {
  route: string
  /** `direct`, or the proxy without its credentials. */
  via: string
  ok: boolean
  problem: EgressProblem | null
  detail: string | null
  /** The banner's reply code when one arrived. */
  banner: number | null
  ms: number
}

/** The egress state: DNS, every route, when it was last tested (null before the first test ends). */
export interface EgressState {
  ok: boolean
  /** The first problem found (DNS first, then the routes in order), or null. */
  problem: EgressProblem | null
  dns: { ok: boolean; detail: string | null }
  routes: RouteHealth[]
  checked_at: string | null
}

export interface EgressMonitorOptions {
  /** The configured resolvers (never a cache: each test asks them). */
  dns: Pick<DnsClient, 'query'>
  routes: readonly EgressRoute[]
  /** The MX host tried (`VERIFIER_EGRESS_TEST_MX`). */
  mx: string
  port: number
  /** Bound on the connection and the banner (ms). */
  timeout_ms: number
  /** Between tests (ms); 0: tested once, at start, and on demand. */
  interval_ms: number
  /** Told at each change of `ok` or of a route's or DNS's health (and once after the first test). */
  on_change?: (state: EgressState, previous: EgressState) => void
}

/** Whether live checks cannot get out in `s`: DNS fails, or the default route (the last) does. */
const isBlocked = (s: EgressState): boolean => !s.dns.ok || s.routes.at(-1)?.ok === false

const UNTESTED: EgressState = { ok: true, problem: null, dns: { ok: true, detail: null }, routes: [], checked_at: null }

/** A one-line summary of what changed health between two states (the log line of a change). */
const healthKey = (s: EgressState): string => JSON.stringify([s.ok, s.dns.ok, s.routes.map(r => [r.route, r.ok, r.problem])])

/**
 * The egress self-test: at start and every `interval_ms`, resolves the test MX with the
 * configured resolvers, then, for each route, opens a TCP connection to its port 25
 * (through the route's proxy when it has one) and waits for the banner. What it finds is
 * `state`, read by `/readyz`, `/metrics`, `svc doctor` and the verifier (which holds new
 * live jobs while egress is `blocked`). Cost per test: one DNS query and one connection per
 * route, each bounded by `timeout_ms`.
 */
export class EgressMonitor {
  private readonly o: EgressMonitorOptions
  private current: EgressState = UNTESTED
  private timer: NodeJS.Timeout | null = null
  private running: Promise<EgressState> | null = null

  constructor(options: EgressMonitorOptions) {
    this.o = options
  }

  /** The last test's findings (all well before the first test ends). */
  get state(): EgressState {
    return this.current
  }

  /** Whether live checks cannot get out now (see `isBlocked`). */
  get blocked(): boolean {
    return isBlocked(this.current)
  }

  /** Tests now, then every `interval_ms` (timers do not keep the process alive). */
  async start(): Promise<EgressState> {
    const first = await this.test()
    if (this.o.interval_ms > 0) {
      const tick = (): void => {
        this.timer = setTimeout(() => {
          void this.test().finally(() => {
            if (this.timer !== null) tick()
          })
        }, this.o.interval_ms)
        this.timer.unref()
      }
      tick()
    }
    return first
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }

  /** Runs one self-test (joins one that is running) and makes it the state. */
  async test(): Promise<EgressState> {
    this.running ??= this.run().finally(() => {
      this.running = null
    })
    return await this.running
  }

  private async run(): Promise<EgressState> {
    const previous = this.current
    const next = await testEgress(this.o)
    this.current = next
    if (healthKey(next) !== healthKey(previous) || previous.checked_at === null) this.o.on_change?.(next, previous)
    return next
  }
}

/**
 * One self-test (see `EgressMonitor`): DNS for the test MX, then each route's connection
 * and banner. Never throws: every failure is a finding.
 */
export async function testEgress(o: Pick<EgressMonitorOptions, 'dns' | 'routes' | 'mx' | 'port' | 'timeout_ms'>): Promise<EgressState> {
  const checked_at = new Date().toISOString()
  let ip: string | null = null
  let dnsDetail: string | null = null
  try {
    const answer = await o.dns.query(o.mx, 'A')
    const a = answer.answers.find(r => r.type === 'A')
    if (answer.rcode !== 'NOERROR') dnsDetail = `${o.mx}: the resolver answered ${answer.rcode}`
    else if (a === undefined) dnsDetail = `${o.mx}: no address`
    else ip = (a as { data: string }).data
  } catch (err) {
    dnsDetail = `${o.mx}: ${(err as Error).message}`
  }
  if (ip === null) {
    const routes = o.routes.map(r => ({
      route: r.name,
      via: describeProxy(r.proxy),
      ok: false,
      problem: 'dns_failing' as const,
      detail: 'not tested: DNS failed',
      banner: null,
      ms: 0
    }))
    return { ok: false, problem: 'dns_failing', dns: { ok: false, detail: dnsDetail }, routes, checked_at }
  }
  const to = ip
  const routes = await Promise.all(o.routes.map(async route => await testRoute(route, to, o.port, o.timeout_ms)))
  const failed = routes.find(r => !r.ok)
  return { ok: failed === undefined, problem: failed?.problem ?? null, dns: { ok: true, detail: null }, routes, checked_at }
}

async function testRoute(route: EgressRoute, ip: string, port: number, timeoutMs: number): Promise<RouteHealth> {
  const started = performance.now()
  const base = { route: route.name, via: describeProxy(route.proxy) }
  const ms = (): number => Math.round(performance.now() - started)
  let session: SmtpSession
  try {
    session = await SmtpSession.connect(ip, port, timeoutMs, route)
  } catch (err) {
    const proxy = err instanceof SmtpSessionError && err.kind === 'proxy'
    return { ...base, ok: false, problem: proxy ? 'proxy_failing' : 'port_25_blocked', detail: (err as Error).message, banner: null, ms: ms() }
  }
  try {
    const banner = await session.read()
    await session.quit().catch(() => undefined)
    return { ...base, ok: true, problem: null, detail: null, banner: banner.code, ms: ms() }
  } catch (err) {
    session.close()
    // Connected, but no banner: through a proxy, the proxy's own way out is the likely cause.
    return {
      ...base,
      ok: false,
      problem: route.proxy === null ? 'port_25_blocked' : 'proxy_failing',
      detail: `connected to ${ip}:${port}, no banner: ${(err as Error).message}`,
      banner: null,
      ms: ms()
    }
  }
}
