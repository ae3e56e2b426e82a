import { Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'

export interface MailHost { host: string, preference: number }

/** What DNS says about where mail for a domain goes (RFC 5321 §5.1, RFC 7505). */
export type MailRoute =
  | { kind: 'mx', hosts: MailHost[] }
  /** No MX records: the domain's own A/AAAA address is the implicit MX (RFC 5321 §5.1). */
  | { kind: 'implicit', hosts: MailHost[] }
  /** A single MX with exchange "." (RFC 7505): the domain accepts no mail. */
  | { kind: 'null_mx' }
  | { kind: 'no_mail_server' }
  | { kind: 'nxdomain' }
  | { kind: 'error', code: string }

export interface MailResolver {
  route (domain: string): Promise<MailRoute>
  /** IPv4 then IPv6 addresses of a host; [] when it has none. */
  addresses (host: string): Promise<string[]>
}

function dnsCode (err: unknown): string {
  return (err as { code?: string }).code ?? 'EUNKNOWN'
}

/**
 * MailResolver over `node:dns` with the configured servers (`VERIFIER_DNS_SERVERS`,
 * `ip[:port]`; system resolvers when empty). NXDOMAIN surfaces as ENOTFOUND, an empty
 * answer as ENODATA.
 */
export class DnsMailResolver implements MailResolver {
  private readonly resolver: Resolver

  constructor (options: { servers: string[], timeout_ms: number, tries?: number }) {
    this.resolver = new Resolver({ timeout: options.timeout_ms, tries: options.tries ?? 2 })
    if (options.servers.length > 0) this.resolver.setServers(options.servers)
  }

  async route (domain: string): Promise<MailRoute> {
    try {
      const mx = await this.resolver.resolveMx(domain)
      if (mx.length === 1 && (mx[0].exchange === '' || mx[0].exchange === '.')) return { kind: 'null_mx' }
      const hosts = mx.filter(r => r.exchange !== '' && r.exchange !== '.')
        .map(r => ({ host: r.exchange.toLowerCase().replace(/\.$/, ''), preference: r.priority }))
        .sort((a, b) => a.preference - b.preference)
      if (hosts.length > 0) return { kind: 'mx', hosts }
    } catch (err) {
      const code = dnsCode(err)
      if (code === 'ENOTFOUND') return { kind: 'nxdomain' }
      if (code !== 'ENODATA') return { kind: 'error', code }
    }
    // No MX: fall back to the domain's own address records.
    const addrs = await this.addressesOrError(domain)
    if (typeof addrs === 'string') return addrs === 'ENOTFOUND' ? { kind: 'nxdomain' } : { kind: 'error', code: addrs }
    return addrs.length > 0 ? { kind: 'implicit', hosts: [{ host: domain, preference: 0 }] } : { kind: 'no_mail_server' }
  }

  async addresses (host: string): Promise<string[]> {
    if (isIP(host)) return [host]
    const r = await this.addressesOrError(host)
    return typeof r === 'string' ? [] : r
  }

  private async addressesOrError (host: string): Promise<string[] | string> {
    const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(host), this.resolver.resolve6(host)])
    const out: string[] = []
    if (v4.status === 'fulfilled') out.push(...v4.value)
    if (v6.status === 'fulfilled') out.push(...v6.value)
    if (out.length > 0) return out
    const codes = [v4, v6].map(r => r.status === 'rejected' ? dnsCode(r.reason) : 'ENODATA')
    if (codes.includes('ENOTFOUND')) return 'ENOTFOUND'
    const hard = codes.find(c => c !== 'ENODATA')
    return hard ?? []
  }
}
