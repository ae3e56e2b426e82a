// A simulated mail world on loopback: an authoritative DNS server (UDP, dns-packet) and
// SMTP servers (smtp-server) on 127.x.y.z:25 with scripted behaviours. Never the internet.
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { createServer, type Server as NetServer, type Socket } from 'node:net'
import * as dnsPacket from 'dns-packet'
import { SMTPServer } from 'smtp-server'

export interface Reply { code: number, message: string }

export interface HostSpec {
  name: string
  ip: string
  /** Delay before the banner (ms); past the client's timeout this is a tarpit. */
  banner_delay_ms?: number
  /** Banner refusal instead of 220 (e.g. 421 busy, 554 blocked). */
  banner_reply?: Reply
  /** Reply to RCPT TO for an address (lower-cased); default 250. */
  rcpt?: (address: string) => Reply
  /** Nothing listens on the address: connections are refused. */
  refuse?: boolean
  /** Accept the TCP connection and never say anything. */
  silent?: boolean
  /** Offer STARTTLS (smtp-server's built-in self-signed certificate). */
  starttls?: boolean
  /** Recipients per envelope; beyond it RCPT gets 452 4.5.3. */
  max_rcpt_per_envelope?: number
  /** Concurrent sessions; beyond it the banner is 421 4.7.0. */
  max_sessions?: number
  /** Greylisting: an address is answered 450 4.2.0 until this long (ms) after it was first asked. */
  greylist_ms?: number
  /** Delay before each RCPT reply (ms). */
  rcpt_delay_ms?: number
}

export interface DomainSpec {
  name: string
  /** MX records; `null_mx` publishes RFC 7505 `MX 0 .`. */
  mx?: Array<{ preference: number, exchange: string }> | 'null_mx'
  /** A records of the domain itself (used when it has no MX). */
  a?: string[]
  /** The DNS server answers SERVFAIL for this name. */
  servfail?: boolean
}

export interface MailWorld {
  dns_server: string
  /** SMTP transcript lines seen by the servers: `<ip> <command>`. */
  transcript: string[]
  /** Number of SMTP connections each host accepted. */
  connections: Map<string, number>
  /** Sessions that switched to TLS, per host ip. */
  tls_sessions: Map<string, number>
  /** Peak of concurrent sessions, per host ip. */
  peak_sessions: Map<string, number>
  close (): Promise<void>
}

const ok: Reply = { code: 250, message: '2.1.5 OK' }

/** Starts the DNS server on `${dnsIp}:<random port>` and one SMTP server per host on port 25. */
export async function startMailWorld (options: { dns_ip: string, domains: DomainSpec[], hosts: HostSpec[], smtp_port?: number }): Promise<MailWorld> {
  const port = options.smtp_port ?? 25
  const records = new Map<string, dnsPacket.Answer[]>()
  const add = (name: string, answer: dnsPacket.Answer): void => {
    const key = name.toLowerCase()
    records.set(key, [...(records.get(key) ?? []), answer])
  }
  for (const d of options.domains) {
    if (!records.has(d.name)) records.set(d.name, [])
    if (d.mx === 'null_mx') add(d.name, { type: 'MX', name: d.name, ttl: 300, data: { preference: 0, exchange: '.' } } as dnsPacket.Answer)
    else for (const mx of d.mx ?? []) add(d.name, { type: 'MX', name: d.name, ttl: 300, data: { preference: mx.preference, exchange: mx.exchange } } as dnsPacket.Answer)
    for (const ip of d.a ?? []) add(d.name, { type: 'A', name: d.name, ttl: 300, data: ip })
  }
  for (const h of options.hosts) add(h.name, { type: 'A', name: h.name, ttl: 300, data: h.ip })
  const servfail = new Set(options.domains.filter(d => d.servfail).map(d => d.name))

  const udp: UdpSocket = createSocket('udp4')
  udp.on('message', (msg, rinfo) => {
    let query: dnsPacket.Packet
    try { query = dnsPacket.decode(msg) } catch { return }
    const q = query.questions?.[0]
    if (!q) return
    const name = q.name.toLowerCase().replace(/\.$/, '')
    const known = records.get(name)
    const answers = (known ?? []).filter(a => a.type === q.type)
    const response = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (query.flags ?? 0) & dnsPacket.RECURSION_DESIRED | (servfail.has(name) ? 2 : known ? 0 : 3),
      questions: [q],
      answers
    })
    udp.send(response, rinfo.port, rinfo.address)
  })
  await new Promise<void>(resolve => udp.bind(0, options.dns_ip, resolve))
  const dnsPort = udp.address().port

  const transcript: string[] = []
  const connections = new Map<string, number>()
  const tlsSessions = new Map<string, number>()
  const peak = new Map<string, number>()
  const servers: Array<{ close: () => Promise<void> }> = []
  for (const h of options.hosts) {
    if (h.refuse) continue
    connections.set(h.ip, 0)
    if (h.silent) {
      const sockets = new Set<Socket>()
      const srv: NetServer = createServer(s => { connections.set(h.ip, (connections.get(h.ip) ?? 0) + 1); sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => {}) })
      await new Promise<void>((resolve, reject) => { srv.once('error', reject); srv.listen(port, h.ip, resolve) })
      servers.push({ close: async () => { for (const s of sockets) s.destroy(); await new Promise(resolve => srv.close(resolve)) } })
      continue
    }
    let active = 0
    const firstSeen = new Map<string, number>()
    const smtp = new SMTPServer({
      name: h.name,
      banner: 'ESMTP simulated',
      authOptional: true,
      disabledCommands: h.starttls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
      logger: false,
      socketTimeout: 30_000,
      closeTimeout: 100,
      onConnect (_session, cb) {
        connections.set(h.ip, (connections.get(h.ip) ?? 0) + 1)
        active++
        peak.set(h.ip, Math.max(peak.get(h.ip) ?? 0, active))
        const go = (): void => {
          const reply = h.banner_reply ?? (h.max_sessions !== undefined && active > h.max_sessions ? { code: 421, message: '4.7.0 Too many concurrent sessions, try later' } : null)
          if (reply) {
            const err = new Error(reply.message) as Error & { responseCode: number }
            err.responseCode = reply.code
            cb(err)
          } else cb()
        }
        if (h.banner_delay_ms) setTimeout(go, h.banner_delay_ms)
        else go()
      },
      onClose () { active-- },
      onSecure (_socket, _session, cb) { tlsSessions.set(h.ip, (tlsSessions.get(h.ip) ?? 0) + 1); cb() },
      onMailFrom (address, _session, cb) { transcript.push(`${h.ip} MAIL FROM:<${address.address}>`); cb() },
      onRcptTo (address, session, cb) {
        transcript.push(`${h.ip} RCPT TO:<${address.address}>`)
        const fail = (code: number, message: string): void => {
          const err = new Error(message) as Error & { responseCode: number }
          err.responseCode = code
          cb(err)
        }
        if (h.max_rcpt_per_envelope !== undefined && session.envelope.rcptTo.length >= h.max_rcpt_per_envelope) return fail(452, '4.5.3 Too many recipients')
        const who = address.address.toLowerCase()
        if (h.greylist_ms !== undefined) {
          const seen = firstSeen.get(who)
          if (seen === undefined) firstSeen.set(who, Date.now())
          if (seen === undefined || Date.now() - seen < h.greylist_ms) return fail(450, '4.2.0 Greylisted, please try again later')
        }
        const r = (h.rcpt ?? (() => ok))(who)
        const answer = (): void => {
          if (r.code >= 200 && r.code < 300) return cb()
          fail(r.code, r.message)
        }
        if (h.rcpt_delay_ms) setTimeout(answer, h.rcpt_delay_ms)
        else answer()
      },
      onData (stream, _session, cb) { transcript.push(`${h.ip} DATA`); stream.resume(); stream.on('end', () => cb()) }
    })
    smtp.on('error', () => {})
    await new Promise<void>((resolve, reject) => {
      smtp.server.once('error', reject)
      smtp.listen(port, h.ip, () => resolve())
    })
    servers.push({ close: () => new Promise<void>(resolve => smtp.close(() => resolve())) })
  }
  return {
    dns_server: `${options.dns_ip}:${dnsPort}`,
    transcript,
    connections,
    tls_sessions: tlsSessions,
    peak_sessions: peak,
    close: async () => {
      await Promise.all(servers.map(s => s.close()))
      await new Promise<void>(resolve => udp.close(() => resolve()))
    }
  }
}
