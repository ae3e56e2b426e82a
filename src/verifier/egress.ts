import { createConnection, type Socket } from 'node:net'
import { once } from 'node:events'
import { SocksClient } from 'socks'

/**
 * A SOCKS5 proxy the probe connects through (RFC 1928; user and password: RFC 1929).
 * Only the connection goes through it: DNS stays on the configured resolvers, and the
 * proxy is asked for the MX's IP address, never its name.
 */
export interface SocksProxy {
  host: string
  port: number
  user: string | null
  password: string | null
}

/**
 * One way out to port 25 (an egress route): direct, or through a SOCKS5 proxy, with the HELO
 * name and MAIL FROM address that fit the IP address receivers see (a receiver judges the
 * connecting IP: its reverse name should match the HELO). `providers` (the engine's provider
 * labels, as `google`) and `mx` (host patterns, `*` for any run of characters, as
 * `*.outlook.com`) say which mail hosts it carries; the default route carries the rest.
 */
export interface EgressRoute {
  name: string
  proxy: SocksProxy | null
  helo_name: string
  mail_from: string
  providers: readonly string[]
  mx: readonly string[]
}

/**
 * A `socks5://user:password@host:port` URL (user and password URL-encoded; `socks5h` is
 * refused: the proxy is never asked to resolve names).
 * @throws Error naming what is wrong (the process exits with it at start).
 */
export function parseSocksUrl(value: string): SocksProxy {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new Error('expected socks5://[user:password@]host:port')
  }
  if (url.protocol !== 'socks5:') throw new Error(`expected the socks5: scheme, got ${url.protocol} (names are resolved here, never by the proxy)`)
  if (url.hostname === '' || url.port === '') throw new Error('expected socks5://[user:password@]host:port with a host and a port')
  if (url.pathname !== '' && url.pathname !== '/') throw new Error('a SOCKS5 proxy URL has no path')
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port),
    user: url.username === '' ? null : decodeURIComponent(url.username),
    password: url.password === '' ? null : decodeURIComponent(url.password)
  }
}

/** A proxy as it may be printed or logged: its host and port, never its credentials. */
export function describeProxy(proxy: SocksProxy | null): string {
  if (proxy === null) return 'direct'
  return `socks5://${proxy.user === null ? '' : '***@'}${proxy.host.includes(':') ? `[${proxy.host}]` : proxy.host}:${proxy.port}`
}

const patternOf = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .toLowerCase()
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')}\\.?$`
  )

/**
 * The egress routes in order: the first whose providers or MX patterns match a mail host
 * carries it; the last, `default`, carries the rest. Cost: the routes' patterns per lookup
 * (a handful).
 */
export class EgressRoutes {
  readonly all: readonly EgressRoute[]
  private readonly matchers: ReadonlyArray<{ route: EgressRoute; patterns: RegExp[] }>

  /** @param routes the routing routes, then the default route (last). */
  constructor(routes: readonly EgressRoute[], fallback: EgressRoute) {
    this.all = [...routes, fallback]
    this.matchers = routes.map(route => ({ route, patterns: route.mx.map(patternOf) }))
  }

  /** The route that carries sessions to `mxHost` of `provider` (null: not a known provider). */
  routeFor(provider: string | null, mxHost: string): EgressRoute {
    const host = mxHost.toLowerCase()
    for (const m of this.matchers) {
      if ((provider !== null && m.route.providers.includes(provider)) || m.patterns.some(p => p.test(host))) return m.route
    }
    return this.all[this.all.length - 1]
  }
}

/** Why no connection was made: `proxy` — the proxy itself failed (refused, a SOCKS error, its own port 25 closed, its timeout). */
export class EgressError extends Error {
  readonly kind: 'no_connect' | 'timeout' | 'proxy'
  constructor(kind: 'no_connect' | 'timeout' | 'proxy', message: string) {
    super(message)
    this.name = 'EgressError'
    this.kind = kind
  }
}

/**
 * Opens a TCP connection to `ip:port` on `route`: directly, or through its SOCKS5 proxy
 * (CONNECT to the IP address). Bounded by `timeoutMs`.
 * @throws EgressError `no_connect` (refused, unreachable) or `timeout` for a direct
 *   connection; `proxy` for anything that fails through a proxy (the proxy unreachable, its
 *   authentication, its reply that the destination could not be reached, its timeout): a
 *   failure of the way out, never the mailbox's answer.
 */
export async function openConnection(route: Pick<EgressRoute, 'proxy'>, ip: string, port: number, timeoutMs: number): Promise<Socket> {
  const proxy = route.proxy
  if (proxy !== null) {
    try {
      const { socket } = await SocksClient.createConnection({
        command: 'connect',
        destination: { host: ip, port },
        proxy: { host: proxy.host, port: proxy.port, type: 5, ...(proxy.user !== null && { userId: proxy.user, password: proxy.password ?? '' }) },
        timeout: timeoutMs
      })
      return socket
    } catch (err) {
      throw new EgressError('proxy', `proxy ${describeProxy(proxy)} to ${ip}:${port}: ${(err as Error).message}`)
    }
  }
  const socket = createConnection({ host: ip, port })
  try {
    // Rejects with the socket's 'error', or an AbortError once the timeout's signal fires.
    await once(socket, 'connect', { signal: AbortSignal.timeout(timeoutMs) })
    return socket
  } catch (err) {
    socket.destroy()
    if ((err as Error).name === 'AbortError') throw new EgressError('timeout', `connect to ${ip}:${port} timed out after ${timeoutMs} ms`)
    throw new EgressError('no_connect', `${ip}:${port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
}
