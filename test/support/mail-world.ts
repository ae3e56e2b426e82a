// A simulated mail world on loopback: a DNS server (UDP and TCP, dns-packet) and SMTP
// hosts on 127.x.y.z:2525 (or ::1) with scripted behaviours: a port above 1024, so that any
// user can run the tests (port 25 needs root on Linux); the engine under test is pointed at
// it (`VERIFIER_SMTP_PORT`, the probe's `port`). Never the internet. It logs
// every DNS query and every connection, so tests count what reached it themselves.
import { DnsZone, serveDns, ttlOf, type DnsOptions, type DnsQueryLog, type DnsRecord, type NameFaults, type TtlSpec } from './mail-world-dns.ts'
import { serveSmtpHost, type ConnectionLog, type HostSpec } from './mail-world-smtp.ts'

export type { Reply, ConnectionLog } from './mail-world-smtp.ts'
export type { DnsQueryLog } from './mail-world-dns.ts'

interface DomainSpec {
  name: string
  /** MX records; `null_mx` publishes RFC 7505 `MX 0 .`. */
  mx?: Array<{ preference: number; exchange: string }> | 'null_mx'
  /** A records of the domain itself (used when it has no MX). */
  a?: string[]
  /** AAAA records of the domain itself. */
  aaaa?: string[]
  /** The name is an alias (CNAME) of this one; the resolver follows it. */
  cname?: string
  /** TTLs of the domain's records (default 300 s). */
  ttl?: TtlSpec
  /** The DNS server answers SERVFAIL for this name. */
  servfail?: boolean
  /** UDP answers for this name always come truncated (TC): only TCP gets them. */
  truncate?: boolean
  /** No answer at all to the first N queries for this name, or to every one. */
  drop?: number | 'always'
}

export interface MailWorldOptions {
  dns_ip: string
  domains: DomainSpec[]
  hosts: HostSpec[]
  /** The hosts' SMTP port (default MAIL_WORLD_SMTP_PORT); 25 only where port 25 is the point of the test. */
  smtp_port?: number
  /** More records (CNAME chains, extra A/AAAA/MX), published as given. */
  records?: DnsRecord[]
  /** DNS server behaviour (UDP size limit, SOA for negative answers) and faults of names not in `domains`. */
  dns?: DnsOptions & { faults?: Record<string, NameFaults> }
}

/** The SMTP port of the mail world's hosts unless a test asks for another: above 1024, so no test needs root for it. */
export const MAIL_WORLD_SMTP_PORT = 2525

export interface MailWorld {
  /** `ip:port`, served over UDP and TCP. */
  dns_server: string
  /** The port every host's SMTP server listens on (the engine's `VERIFIER_SMTP_PORT`). */
  smtp_port: number
  /** SMTP transcript lines seen by the servers: `<ip> <command>` for MAIL FROM, RCPT TO and DATA. */
  transcript: string[]
  /** Number of SMTP connections each host accepted. */
  connections: Map<string, number>
  /** Sessions that switched to TLS, per host ip. */
  tls_sessions: Map<string, number>
  /** Peak of concurrent sessions, per host ip. */
  peak_sessions: Map<string, number>
  /** Every DNS query received, in order of arrival. */
  dns_queries: DnsQueryLog[]
  /** Every TCP connection an SMTP host accepted (also those that never sent a command), in order. */
  connection_log: ConnectionLog[]
  /** Replaces a domain's records and faults while the world runs (a changed zone). */
  update_domain(d: DomainSpec): void
  close(): Promise<void>
}

function domainRecords(d: DomainSpec): DnsRecord[] {
  const out: DnsRecord[] = []
  if (d.cname) out.push({ name: d.name, type: 'CNAME', data: d.cname, ttl: ttlOf(d.ttl, 'CNAME') })
  if (d.mx === 'null_mx') out.push({ name: d.name, type: 'MX', data: { preference: 0, exchange: '.' }, ttl: ttlOf(d.ttl, 'MX') })
  else for (const mx of d.mx ?? []) out.push({ name: d.name, type: 'MX', data: { preference: mx.preference, exchange: mx.exchange }, ttl: ttlOf(d.ttl, 'MX') })
  for (const ip of d.a ?? []) out.push({ name: d.name, type: 'A', data: ip, ttl: ttlOf(d.ttl, 'A') })
  for (const ip of d.aaaa ?? []) out.push({ name: d.name, type: 'AAAA', data: ip, ttl: ttlOf(d.ttl, 'AAAA') })
  return out
}

function hostRecords(h: HostSpec): DnsRecord[] {
  const out: DnsRecord[] = []
  const v6 = h.ip.includes(':')
  if (h.publish_ip !== false) out.push({ name: h.name, type: v6 ? 'AAAA' : 'A', data: h.ip, ttl: ttlOf(h.ttl, v6 ? 'AAAA' : 'A') })
  for (const ip of h.aaaa ?? []) out.push({ name: h.name, type: 'AAAA', data: ip, ttl: ttlOf(h.ttl, 'AAAA') })
  return out
}

/** Starts the DNS server on `${dns_ip}:<random port>` and one SMTP server per host on `smtp_port` (MAIL_WORLD_SMTP_PORT). */
export async function startMailWorld(options: MailWorldOptions): Promise<MailWorld> {
  const port = options.smtp_port ?? MAIL_WORLD_SMTP_PORT
  const zone = new DnsZone(options.dns ?? {})
  const setDomain = (d: DomainSpec): void => {
    zone.replace(d.name, domainRecords(d))
    zone.faults.set(d.name.toLowerCase(), { servfail: d.servfail, truncate: d.truncate, drop: d.drop })
  }
  for (const d of options.domains) setDomain(d)
  for (const h of options.hosts) for (const r of hostRecords(h)) zone.add(r)
  for (const r of options.records ?? []) zone.add(r)
  for (const [name, faults] of Object.entries(options.dns?.faults ?? {})) zone.faults.set(name.toLowerCase(), faults)
  const dns = await serveDns(zone, options.dns_ip)

  const logs = {
    transcript: [] as string[],
    connections: new Map<string, number>(),
    tls_sessions: new Map<string, number>(),
    peak_sessions: new Map<string, number>(),
    connection_log: [] as ConnectionLog[]
  }
  const closers: Array<() => Promise<void>> = [dns.close]
  try {
    for (const h of options.hosts) if (!h.refuse) closers.push(await serveSmtpHost(h, port, logs))
  } catch (err) {
    await Promise.all(closers.map(c => c()))
    throw err
  }
  return {
    dns_server: `${options.dns_ip}:${dns.port}`,
    smtp_port: port,
    ...logs,
    dns_queries: zone.log,
    update_domain: setDomain,
    close: async () => {
      await Promise.all(closers.map(c => c()))
    }
  }
}
