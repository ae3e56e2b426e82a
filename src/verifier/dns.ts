import { LRUCache } from 'lru-cache'
import { createSocket } from 'node:dgram'
import { createConnection, isIP } from 'node:net'
import { getServers } from 'node:dns'
import { randomInt } from 'node:crypto'
import * as packet from 'dns-packet'

export interface MailHost {
  host: string
  preference: number
}

/** What DNS says about where mail for a domain goes (RFC 5321 §5.1, RFC 7505). */
export type MailRoute =
  | { kind: 'mx'; hosts: MailHost[] }
  /** No MX records: the domain's own A/AAAA address is the implicit MX (RFC 5321 §5.1). */
  | { kind: 'implicit'; hosts: MailHost[] }
  /** A single MX with exchange "." (RFC 7505): the domain accepts no mail. */
  | { kind: 'null_mx' }
  | { kind: 'no_mail_server' }
  | { kind: 'nxdomain' }
  | { kind: 'error'; code: string }

export interface MailResolver {
  route(domain: string): Promise<MailRoute>
  /**
   * IPv4 then IPv6 addresses of a host; [] when it has none.
   * @throws DnsLookupError when DNS did not say (timeout, SERVFAIL, an alias loop).
   */
  addresses(host: string): Promise<string[]>
}

export interface DnsAnswer {
  rcode: string
  answers: packet.Answer[]
  authorities: packet.Answer[]
}

class DnsTimeoutError extends Error {
  readonly code = 'ETIMEOUT'
  constructor(name: string, type: string) {
    super(`DNS ${type} ${name}: no answer in time`)
    this.name = 'DnsTimeoutError'
  }
}

/** A host's addresses could not be learnt: `code` is ETIMEOUT, a response code (SERVFAIL, …) or ECNAMELOOP. */
class DnsLookupError extends Error {
  readonly code: string
  constructor(host: string, code: string) {
    super(`${host}: address lookup failed (${code})`)
    this.name = 'DnsLookupError'
    this.code = code
  }
}

function parseServer(s: string): { host: string; port: number } {
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(s)
  if (v6) return { host: v6[1], port: Number(v6[2] ?? 53) }
  if (isIP(s) === 6) return { host: s, port: 53 }
  const [host, port] = s.split(':')
  return { host, port: Number(port ?? 53) }
}

/**
 * A stub resolver over UDP (TCP when the answer is truncated, RFC 1035 §4.2) with
 * dns-packet for the wire format. It returns TTLs and the response code, which
 * `node:dns` hides, so answers can be cached for exactly as long as they are valid.
 * Servers are tried in order, `tries` rounds, each query bounded by `timeout_ms`.
 */
export class DnsClient {
  private readonly servers: Array<{ host: string; port: number }>
  private readonly timeoutMs: number
  private readonly tries: number

  constructor(options: { servers: string[]; timeout_ms: number; tries?: number }) {
    const list = options.servers.length > 0 ? options.servers : getServers()
    this.servers = list.map(parseServer)
    this.timeoutMs = options.timeout_ms
    this.tries = options.tries ?? 2
  }

  /** @throws DnsTimeoutError when no server answered. */
  async query(name: string, type: 'MX' | 'A' | 'AAAA'): Promise<DnsAnswer> {
    let lastError: Error = new DnsTimeoutError(name, type)
    for (let round = 0; round < this.tries; round++) {
      for (const server of this.servers) {
        try {
          let res = await this.udp(server, name, type)
          if (res.flag_tc) res = await this.tcp(server, name, type)
          return { rcode: (res as unknown as { rcode: string }).rcode, answers: res.answers ?? [], authorities: res.authorities ?? [] }
        } catch (err) {
          lastError = err as Error
        }
      }
    }
    throw lastError
  }

  private request(name: string, type: string): packet.Packet {
    return { type: 'query', id: randomInt(0, 65536), flags: packet.RECURSION_DESIRED, questions: [{ type: type as 'A', name }] }
  }

  private async udp(server: { host: string; port: number }, name: string, type: string): Promise<packet.DecodedPacket> {
    const q = this.request(name, type)
    const wire = packet.encode(q)
    const socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4')
    // UDP loses packets under load: retransmit the same query every quarter of the
    // timeout (at most every 500 ms) until an answer comes or the timeout passes.
    const every = Math.min(500, Math.max(50, Math.floor(this.timeoutMs / 4)))
    let resend: NodeJS.Timeout | undefined
    try {
      return await new Promise<packet.DecodedPacket>((resolve, reject) => {
        const timer = setTimeout(() => reject(new DnsTimeoutError(name, type)), this.timeoutMs)
        socket.on('error', err => {
          clearTimeout(timer)
          reject(err)
        })
        socket.on('message', msg => {
          let res: packet.DecodedPacket
          try {
            res = packet.decode(msg)
          } catch {
            return
          }
          if (res.id !== q.id) return
          clearTimeout(timer)
          resolve(res)
        })
        const send = (): void => {
          socket.send(wire, server.port, server.host)
        }
        send()
        resend = setInterval(send, every)
      })
    } finally {
      clearInterval(resend)
      socket.close()
    }
  }

  private async tcp(server: { host: string; port: number }, name: string, type: string): Promise<packet.DecodedPacket> {
    const q = this.request(name, type)
    return await new Promise<packet.DecodedPacket>((resolve, reject) => {
      const socket = createConnection({ host: server.host, port: server.port })
      let buf = Buffer.alloc(0)
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new DnsTimeoutError(name, type))
      }, this.timeoutMs)
      socket.on('connect', () => socket.write(packet.streamEncode(q)))
      socket.on('data', chunk => {
        buf = Buffer.concat([buf, chunk as Buffer])
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          clearTimeout(timer)
          socket.destroy()
          try {
            resolve(packet.streamDecode(buf) as packet.DecodedPacket)
          } catch (err) {
            reject(err)
          }
        }
      })
      socket.on('error', err => {
        clearTimeout(timer)
        reject(err)
      })
    })
  }
}

interface Cached<T> {
  value: T
  expires: number
}

/** Negative answers (NXDOMAIN, no data) are cached per the SOA (RFC 2308 §5), within these bounds (s). */
const NEGATIVE_TTL = { default: 300, max: 3_600 }

function negativeTtl(authorities: packet.Answer[]): number {
  const soa = authorities.find(a => a.type === 'SOA') as (packet.Answer & { ttl?: number; data: { minimum?: number } }) | undefined
  if (!soa) return NEGATIVE_TTL.default
  return Math.min(NEGATIVE_TTL.max, soa.ttl ?? NEGATIVE_TTL.default, soa.data.minimum ?? NEGATIVE_TTL.default)
}

const minTtl = (answers: packet.Answer[]): number => Math.min(...answers.map(a => (a as { ttl?: number }).ttl ?? 300))

/** The CNAME records of an answer: a result reached through aliases is valid only as long as each link's TTL (RFC 2181 §8, §10.1). */
const aliasesOf = (answers: packet.Answer[]): packet.Answer[] => answers.filter(a => a.type === 'CNAME')

const canonical = (name: string): string => name.toLowerCase().replace(/\.$/, '')

/** Aliases followed per question at most (RFC 1034 §5.3.3: a resolver bounds its work so that no request loops). */
const MAX_CNAME_LINKS = 8

/**
 * MailResolver with a cache that respects each record's TTL (docs/design/verification.md check 4):
 * MX routes and host addresses are kept until their TTL runs out, negative answers per
 * RFC 2308, failures (SERVFAIL, timeout) not at all. Concurrent lookups of one name share
 * one query. `cache: false` turns caching off (the benchmark's naive mode).
 */
export class CachingMailResolver implements MailResolver {
  private readonly dns: DnsClient
  // The most recent 100,000 names each (least recently used go first): bounded whatever the lists.
  // Bounded by count through `maxSize` (each entry 1), not `max`: lru-cache preallocates `max` slots at construction (20 ms and 2 MB each at start-up), `maxSize` grows with use.
  private readonly routes = new LRUCache<string, Cached<MailRoute>>({ maxSize: 100_000, sizeCalculation: () => 1 })
  private readonly addrs = new LRUCache<string, Cached<string[]>>({ maxSize: 100_000, sizeCalculation: () => 1 })
  private readonly inflight = new Map<string, Promise<unknown>>()
  private readonly now: () => number
  private readonly enabled: boolean
  /** Queries sent (for tests and the benchmark). */
  queries = 0

  constructor(dns: DnsClient, options: { cache?: boolean; now?: () => number } = {}) {
    this.dns = dns
    this.enabled = options.cache ?? true
    this.now = options.now ?? Date.now
  }

  async route(domain: string): Promise<MailRoute> {
    return await this.cached(this.routes, `route:${domain}`, domain, () => this.lookupRoute(domain))
  }

  async addresses(host: string): Promise<string[]> {
    if (isIP(host)) return [host]
    return await this.cached(this.addrs, `addr:${host}`, host, async () => {
      const r = await this.lookupAddresses(host)
      if (r === 'NXDOMAIN') return { value: [], ttl: 0 }
      if (typeof r === 'string') throw new DnsLookupError(host, r)
      return r
    })
  }

  private async cached<T>(map: LRUCache<string, Cached<T>>, key: string, name: string, load: () => Promise<{ value: T; ttl: number }>): Promise<T> {
    const hit = map.get(name)
    if (hit && hit.expires > this.now()) return hit.value
    const pending = this.inflight.get(key) as Promise<T> | undefined
    if (pending) return await pending
    const p = load()
      .then(({ value, ttl }) => {
        if (this.enabled && ttl > 0) map.set(name, { value, expires: this.now() + ttl * 1000 })
        return value
      })
      .finally(() => this.inflight.delete(key))
    this.inflight.set(key, p)
    return await p
  }

  /**
   * One question, following aliases: an answer with a CNAME but no record of the type asked
   * (a server that did not chase it) is asked again at the canonical name, "processed as if
   * it were the initial name" (RFC 5321 §5.1; RFC 1034 §3.6.2, §5.3.3), at most
   * `MAX_CNAME_LINKS` links. The aliases come first in the answers returned, so that their
   * TTLs bound the caching. An alias loop is the error ECNAMELOOP.
   */
  private async ask(name: string, type: 'MX' | 'A' | 'AAAA'): Promise<DnsAnswer | string> {
    const aliases: packet.Answer[] = []
    const seen = new Set<string>([canonical(name)])
    let target = canonical(name)
    for (let links = 0; links <= MAX_CNAME_LINKS; links++) {
      this.queries++
      let res: DnsAnswer
      try {
        res = await this.dns.query(target, type)
      } catch (err) {
        return (err as { code?: string }).code ?? 'EUNKNOWN'
      }
      const answers = [...aliases, ...res.answers]
      if (res.rcode !== 'NOERROR' || res.answers.some(a => a.type === type)) return { ...res, answers }
      // Follow the chain as far as this answer goes.
      let end = target
      for (;;) {
        const link = res.answers.find(a => a.type === 'CNAME' && canonical(a.name) === end)
        if (!link) break
        aliases.push(link)
        end = canonical((link as { data: string }).data)
        if (seen.has(end)) return 'ECNAMELOOP'
        seen.add(end)
      }
      if (end === target) return { ...res, answers }
      target = end
    }
    return 'ECNAMELOOP'
  }

  private async lookupRoute(domain: string): Promise<{ value: MailRoute; ttl: number }> {
    const mx = await this.ask(domain, 'MX')
    if (typeof mx === 'string') return { value: { kind: 'error', code: mx }, ttl: 0 }
    if (mx.rcode === 'NXDOMAIN') return { value: { kind: 'nxdomain' }, ttl: negativeTtl(mx.authorities) }
    if (mx.rcode !== 'NOERROR') return { value: { kind: 'error', code: mx.rcode }, ttl: 0 }
    const records = mx.answers.filter(a => a.type === 'MX') as Array<packet.Answer & { data: { preference: number; exchange: string } }>
    if (records.length > 0) {
      const ttl = minTtl([...records, ...aliasesOf(mx.answers)])
      if (records.length === 1 && (records[0].data.exchange === '' || records[0].data.exchange === '.')) return { value: { kind: 'null_mx' }, ttl }
      const hosts = records
        .filter(r => r.data.exchange !== '' && r.data.exchange !== '.')
        .map(r => ({ host: r.data.exchange.toLowerCase().replace(/\.$/, ''), preference: r.data.preference }))
        .sort((a, b) => a.preference - b.preference || a.host.localeCompare(b.host))
      return { value: { kind: 'mx', hosts }, ttl }
    }
    // No MX: the domain's own address is the implicit MX (RFC 5321 §5.1).
    const a = await this.lookupAddresses(domain)
    if (typeof a === 'string')
      return a === 'NXDOMAIN' ? { value: { kind: 'nxdomain' }, ttl: negativeTtl(mx.authorities) } : { value: { kind: 'error', code: a }, ttl: 0 }
    if (a.value.length === 0) return { value: { kind: 'no_mail_server' }, ttl: negativeTtl(mx.authorities) }
    if (this.enabled) this.addrs.set(domain, { value: a.value, expires: this.now() + a.ttl * 1000 })
    return { value: { kind: 'implicit', hosts: [{ host: domain, preference: 0 }] }, ttl: a.ttl }
  }

  private async lookupAddresses(host: string): Promise<{ value: string[]; ttl: number } | string> {
    const [v4, v6] = await Promise.all([this.ask(host, 'A'), this.ask(host, 'AAAA')])
    const out: string[] = []
    const ttls: number[] = []
    for (const r of [v4, v6]) {
      if (typeof r === 'string' || r.rcode !== 'NOERROR') continue
      const recs = r.answers.filter(a => a.type === 'A' || a.type === 'AAAA')
      for (const a of recs) out.push((a as { data: string }).data)
      if (recs.length > 0) ttls.push(minTtl([...recs, ...aliasesOf(r.answers)]))
    }
    if (out.length > 0) return { value: out, ttl: Math.min(...ttls) }
    if (typeof v4 !== 'string' && v4.rcode === 'NXDOMAIN') return 'NXDOMAIN'
    // No address, and a query that failed (either family) may hide one: that is the answer, not "none".
    for (const r of [v4, v6]) {
      if (typeof r === 'string') return r
      if (r.rcode !== 'NOERROR') return r.rcode
    }
    return { value: [], ttl: negativeTtl((v4 as DnsAnswer).authorities) }
  }
}

/** The `dns` check's outcome and detail for a route. */
export function describeRoute(r: MailRoute): { outcome: 'pass' | 'warn' | 'fail' | 'error'; detail: string } {
  switch (r.kind) {
    case 'mx':
      return { outcome: 'pass', detail: `MX ${r.hosts.map(h => `${h.preference} ${h.host}`).join(', ')}` }
    case 'implicit':
      return { outcome: 'warn', detail: 'no MX; A/AAAA fallback (RFC 5321 §5.1)' }
    case 'null_mx':
      return { outcome: 'fail', detail: 'null MX (RFC 7505)' }
    case 'no_mail_server':
      return { outcome: 'fail', detail: 'no MX and no address records' }
    case 'nxdomain':
      return { outcome: 'fail', detail: 'NXDOMAIN' }
    case 'error':
      return { outcome: 'error', detail: r.code }
  }
}
