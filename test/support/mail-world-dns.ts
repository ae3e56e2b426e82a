// The mail world's DNS server: one port on `dns_ip`, served over UDP and TCP (RFC 1035
// §4.2), answering like a recursive resolver from a table of records. Faults per name:
// SERVFAIL, truncation (TC over UDP, so the client must ask again over TCP), dropped
// queries. Every query is logged.
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { createServer, type Server as NetServer, type Socket } from 'node:net'
import * as dnsPacket from 'dns-packet'

export type DnsRecordType = 'A' | 'AAAA' | 'MX' | 'CNAME'

/** One resource record. `data`: an address, a name (CNAME) or `{ preference, exchange }` (MX). */
export interface DnsRecord {
  name: string
  type: DnsRecordType
  data: string | { preference: number; exchange: string }
  /** Seconds (default 300). */
  ttl?: number
  /**
   * CNAME only: whether the server follows the alias and adds the canonical name's
   * records to the answer, as recursive resolvers do (default true). false answers with
   * the CNAME alone, as an authoritative server does for a target outside its zone.
   */
  chase?: boolean
}

/** How the server treats queries for one name. */
export interface NameFaults {
  /** Answer SERVFAIL. */
  servfail?: boolean
  /** Over UDP, always answer with TC set and no records (the answer only comes over TCP). */
  truncate?: boolean
  /** Send no answer at all for the first N queries of the name (either transport), or for all. */
  drop?: number | 'always'
  /** Only queries of these types are dropped (and counted for `drop`); default all. */
  drop_types?: string[]
}

/** TTLs per record type (seconds), or one for all. */
export type TtlSpec = number | Partial<Record<DnsRecordType, number>>

export const ttlOf = (spec: TtlSpec | undefined, type: DnsRecordType): number => (typeof spec === 'number' ? spec : (spec?.[type] ?? 300))

export interface DnsQueryLog {
  transport: 'udp' | 'tcp'
  /** The message id: a retransmission of the same query has the same one. */
  id: number
  name: string
  type: string
  /** Epoch ms when the query arrived. */
  at: number
  outcome: 'answered' | 'truncated' | 'dropped'
}

export interface DnsOptions {
  /** Largest UDP answer (bytes); larger ones go out truncated (TC). Default 512 (RFC 1035 §4.2.1; the client sends no EDNS). */
  udp_max_bytes?: number
  /** SOA put in the authority section of negative answers (NXDOMAIN, no data), for negative caching (RFC 2308). */
  soa?: { ttl: number; minimum: number }
}

const NOERROR = 0
const SERVFAIL = 2
const NXDOMAIN = 3
const MAX_CHASE = 8

const lower = (name: string): string => name.toLowerCase().replace(/\.$/, '')

/** The records, faults and query log of a running DNS server; `records` and `faults` may change while it runs. */
export class DnsZone {
  readonly records = new Map<string, DnsRecord[]>()
  readonly faults = new Map<string, NameFaults>()
  readonly log: DnsQueryLog[] = []
  private readonly dropped = new Map<string, number>()
  private readonly options: DnsOptions

  constructor(options: DnsOptions = {}) {
    this.options = options
  }

  /** Makes `name` exist (answering NOERROR, possibly without data). */
  ensure(name: string): void {
    if (!this.records.has(lower(name))) this.records.set(lower(name), [])
  }

  add(record: DnsRecord): void {
    this.ensure(record.name)
    this.records.get(lower(record.name))!.push(record)
  }

  /** Replaces everything published for `name`. */
  replace(name: string, records: DnsRecord[]): void {
    this.records.set(lower(name), [])
    for (const r of records) this.add(r)
  }

  private wire(r: DnsRecord): dnsPacket.Answer {
    return { type: r.type, name: r.name, ttl: r.ttl ?? 300, data: r.data } as dnsPacket.Answer
  }

  /** The rcode and answer records for a question, following CNAMEs as a recursive resolver does. */
  private resolve(name: string, type: string, depth = 0): { rcode: number; answers: dnsPacket.Answer[] } {
    if (this.faults.get(name)?.servfail) return { rcode: SERVFAIL, answers: [] }
    const known = this.records.get(name)
    if (!known) return { rcode: NXDOMAIN, answers: [] }
    const exact = known.filter(r => r.type === type)
    const alias = known.find(r => r.type === 'CNAME')
    if (exact.length > 0 || !alias) return { rcode: NOERROR, answers: exact.map(r => this.wire(r)) }
    if (alias.chase === false || depth >= MAX_CHASE) return { rcode: NOERROR, answers: [this.wire(alias)] }
    const rest = this.resolve(lower(alias.data as string), type, depth + 1)
    return { rcode: rest.rcode, answers: [this.wire(alias), ...rest.answers] }
  }

  /** The response to one query (null: drop it), and the log entry. */
  answer(msg: Buffer, transport: 'udp' | 'tcp'): Buffer | null {
    let query: dnsPacket.Packet
    try {
      query = dnsPacket.decode(msg)
    } catch {
      return null
    }
    const q = query.questions?.[0]
    if (!q) return null
    const name = lower(q.name)
    const entry: DnsQueryLog = { transport, id: query.id ?? 0, name, type: q.type, at: Date.now(), outcome: 'answered' }
    this.log.push(entry)
    const faults = this.faults.get(name)
    if (faults?.drop !== undefined && (faults.drop_types === undefined || faults.drop_types.includes(q.type))) {
      const seen = (this.dropped.get(name) ?? 0) + 1
      this.dropped.set(name, seen)
      if (faults.drop === 'always' || seen <= faults.drop) {
        entry.outcome = 'dropped'
        return null
      }
    }
    const { rcode, answers } = this.resolve(name, q.type)
    const soa = this.options.soa
    const negative = soa !== undefined && (rcode === NXDOMAIN || (rcode === NOERROR && !answers.some(a => a.type === q.type)))
    const response = (truncated: boolean): Buffer =>
      dnsPacket.encode({
        id: query.id,
        type: 'response',
        flags:
          dnsPacket.AUTHORITATIVE_ANSWER |
          dnsPacket.RECURSION_AVAILABLE |
          ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
          (truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) |
          rcode,
        questions: [q],
        answers: truncated ? [] : answers,
        authorities:
          truncated || !negative
            ? []
            : [
                {
                  type: 'SOA',
                  name,
                  ttl: soa.ttl,
                  data: { mname: 'ns.world.test', rname: 'hostmaster.world.test', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: soa.minimum }
                } as dnsPacket.Answer
              ]
      })
    const full = response(false)
    if (transport === 'udp' && (faults?.truncate === true || full.length > (this.options.udp_max_bytes ?? 512))) {
      entry.outcome = 'truncated'
      return response(true)
    }
    return full
  }
}

/**
 * Serves `zone` over UDP and TCP on one port of `ip` (a random one free for both).
 * @returns the port and a close function.
 */
export async function serveDns(zone: DnsZone, ip: string): Promise<{ port: number; close: () => Promise<void> }> {
  for (let attempt = 0; ; attempt++) {
    const udp: UdpSocket = createSocket('udp4')
    udp.on('message', (msg, rinfo) => {
      const res = zone.answer(msg, 'udp')
      if (res) udp.send(res, rinfo.port, rinfo.address)
    })
    await new Promise<void>(resolve => udp.bind(0, ip, resolve))
    const port = udp.address().port
    const sockets = new Set<Socket>()
    const tcp: NetServer = createServer(s => {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {})
      let buf = Buffer.alloc(0)
      s.on('data', chunk => {
        buf = Buffer.concat([buf, chunk as Buffer])
        // Each message is preceded by its two-byte length (RFC 1035 §4.2.2).
        while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          const msg = buf.subarray(2, 2 + buf.readUInt16BE(0))
          buf = buf.subarray(2 + msg.length)
          const res = zone.answer(msg, 'tcp')
          if (res) {
            const len = Buffer.alloc(2)
            len.writeUInt16BE(res.length)
            s.write(Buffer.concat([len, res]))
          }
        }
      })
    })
    const listening = await new Promise<boolean>(resolve => {
      tcp.once('error', () => resolve(false))
      tcp.listen(port, ip, () => resolve(true))
    })
    if (!listening) {
      await new Promise<void>(resolve => udp.close(() => resolve()))
      if (attempt >= 20) throw new Error(`no port on ${ip} free for both UDP and TCP`)
      continue
    }
    return {
      port,
      close: async () => {
        for (const s of sockets) s.destroy()
        await new Promise(resolve => tcp.close(resolve))
        await new Promise<void>(resolve => udp.close(() => resolve()))
      }
    }
  }
}
