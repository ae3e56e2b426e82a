// The real verification engine pointed at a mail world, and counts of what the world
// itself saw (never the engine's own statistics).
import { VerificationEngine, type EngineOptions } from '../../src/verifier/engine.ts'
import { CachingMailResolver, DnsClient } from '../../src/verifier/dns.ts'
import { DEFAULT_POLITENESS } from '../../src/verifier/politeness.ts'
import type { ProbeOptions } from '../../src/verifier/smtp-probe.ts'
import type { ConnectionLog, DnsQueryLog, MailWorld } from './mail-world.ts'

export interface EngineSetup {
  /** Bound on connect, banner and each command (ms). */
  timeout_ms?: number
  dns_timeout_ms?: number
  dns_tries?: number
  /** The resolver cache's clock (epoch ms). */
  now?: () => number
  probe?: Partial<ProbeOptions>
  engine?: Partial<EngineOptions>
}

/** An engine as the service builds it, towards the world's DNS server, with private targets allowed and no result cache. */
export function engineFor(world: MailWorld, o: EngineSetup = {}): { engine: VerificationEngine; resolver: CachingMailResolver } {
  const resolver = new CachingMailResolver(new DnsClient({ servers: [world.dns_server], timeout_ms: o.dns_timeout_ms ?? 1_000, tries: o.dns_tries }), {
    now: o.now
  })
  const engine = new VerificationEngine({
    resolver,
    probe: {
      port: world.smtp_port,
      helo_name: 'verifier.test.example',
      mail_from: 'probe@verifier.test.example',
      timeout_ms: o.timeout_ms ?? 1_000,
      allow_private_targets: true,
      ...o.probe
    },
    politeness: { ...DEFAULT_POLITENESS, sessions_per_second_per_host: 1_000, burst_per_host: 10, backoff: { initial_ms: 50, max_ms: 200 } },
    result_cache_ttl_ms: 0,
    pushback_deadline_ms: 0,
    ...o.engine
  })
  return { engine, resolver }
}

/** DNS queries the world received for `name` (optionally of one type). */
export const queriesFor = (world: MailWorld, name: string, type?: string): DnsQueryLog[] =>
  world.dns_queries.filter(q => q.name === name && (type === undefined || q.type === type))

/** Questions the world was asked about `name` and `type`: queries counted once however often they were retransmitted. */
export const lookupsOf = (world: MailWorld, name: string, type: string): number =>
  new Set(queriesFor(world, name, type).map(q => `${q.transport} ${q.id}`)).size

/** TCP connections the world's host at `ip` accepted. */
export const connectionsTo = (world: MailWorld, ip: string): ConnectionLog[] => world.connection_log.filter(c => c.ip === ip)

/** RCPT TO commands for `address` that reached the world's hosts (answered or not). */
export const rcptsFor = (world: MailWorld, address: string): number =>
  world.connection_log.flatMap(c => c.commands).filter(l => l.toLowerCase().replace(/^rcpt to:\s*/, 'rcpt to:') === `rcpt to:<${address.toLowerCase()}>`).length

/** Resolves once every connection to `ip` has ended (the engine quits after it answered); rejects after `ms`. */
export async function ended(world: MailWorld, ip: string, ms = 5_000): Promise<void> {
  const until = Date.now() + ms
  while (connectionsTo(world, ip).some(c => c.closed_by === null)) {
    if (Date.now() > until) throw new Error(`connections to ${ip} still open after ${ms} ms`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/** The verb of each command a connection sent (`EHLO`, `STARTTLS`, `MAIL`, …). */
export const verbs = (c: ConnectionLog): string[] => c.commands.map(l => l.split(/[ :]/)[0].toUpperCase())
