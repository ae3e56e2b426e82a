import type { CheckName } from '../domain/checks.ts'
import { parseAddress } from './syntax.ts'
import { isDisposableDomain, isFreeDomain, isRoleLocalPart } from './lists.ts'
import type { MailResolver, MailHost } from './dns.ts'
import { probeRecipients, type ProbeOptions, type RecipientAnswer } from './smtp-probe.ts'
import { providerOf } from './providers.ts'
import { scoreOf } from './score.ts'
import { VERDICT_OF, type CheckRecord, type Reason, type VerificationResult } from './result.ts'

export interface EngineOptions extends ProbeOptions {
  resolver: MailResolver
  now?: () => Date
}

const RETRYABLE: ReadonlySet<Reason> = new Set(['greylisted', 'timeout', 'no_connect', 'smtp_unavailable', 'ip_blocked', 'unexpected_error', 'mailbox_full'])

/**
 * The verification engine (VERIFICATION.md). `verify` runs the requested checks on one
 * address — syntax, disposable, role, free, dns, smtp — and returns the verdict, primary
 * reason, score and per-check detail. It never throws for any input: failures of the
 * network become `unknown` reasons.
 */
export class VerificationEngine {
  private readonly o: EngineOptions
  constructor (options: EngineOptions) { this.o = options }

  async verify (email: string, checks: readonly CheckName[]): Promise<VerificationResult> {
    const now = this.o.now ?? (() => new Date())
    const records: CheckRecord[] = []
    const flags: string[] = []
    const timed = async <T>(name: string, fn: () => Promise<T> | T, outcome: (v: T) => [CheckRecord['outcome'], string | null]): Promise<T> => {
      const t0 = performance.now()
      const v = await fn()
      const [o, detail] = outcome(v)
      records.push({ name, outcome: o, duration_ms: Math.round((performance.now() - t0) * 10) / 10, detail })
      return v
    }
    const done = (reason: Reason, extra: Partial<VerificationResult> = {}): VerificationResult => {
      const { score, breakdown } = scoreOf(reason, flags)
      return {
        email,
        normalized: null,
        verdict: VERDICT_OF[reason],
        reason,
        score,
        score_breakdown: breakdown,
        flags,
        did_you_mean: null,
        mx: null,
        smtp: null,
        checks: records,
        retryable: RETRYABLE.has(reason),
        checked_at: now().toISOString(),
        cached: false,
        sandbox: false,
        ...extra
      }
    }

    const parsed = await timed('syntax', () => parseAddress(email), p => p.ok ? ['pass', null] : ['fail', p.detail])
    if (!parsed.ok) return done('invalid_syntax')
    const base = { normalized: parsed.normalized }
    const domain = parsed.ascii_domain

    if (checks.includes('disposable')) {
      const d = await timed('disposable', () => isDisposableDomain(domain), v => [v ? 'warn' : 'pass', v ? 'disposable-mail domain' : null])
      if (d) flags.push('disposable')
    }
    if (checks.includes('role')) {
      const r = await timed('role', () => isRoleLocalPart(parsed.local), v => [v ? 'warn' : 'pass', v ? 'role account' : null])
      if (r) flags.push('role')
    }
    if (checks.includes('free')) {
      const f = await timed('free', () => isFreeDomain(domain), v => ['pass', v ? 'free mailbox provider' : null])
      if (f) flags.push('free')
    }

    if (!checks.includes('dns')) return this.firm(done, base, flags, null)
    const route = await timed('dns', () => this.o.resolver.route(domain), r => {
      switch (r.kind) {
        case 'mx': return ['pass', `MX ${r.hosts.map(h => `${h.preference} ${h.host}`).join(', ')}`]
        case 'implicit': return ['warn', 'no MX; A/AAAA fallback (RFC 5321 §5.1)']
        case 'null_mx': return ['fail', 'null MX (RFC 7505)']
        case 'no_mail_server': return ['fail', 'no MX and no address records']
        case 'nxdomain': return ['fail', 'NXDOMAIN']
        case 'error': return ['error', r.code]
      }
    })
    switch (route.kind) {
      case 'nxdomain': return done('invalid_domain', base)
      case 'null_mx':
      case 'no_mail_server': return done('no_mail_server', base)
      case 'error': return done(route.code === 'ETIMEOUT' ? 'timeout' : 'unexpected_error', base)
    }
    const first = route.hosts[0]
    const mxOf = (h: MailHost | null): VerificationResult['mx'] => h ? { host: h.host, preference: h.preference, provider: providerOf(h.host) } : null

    if (!checks.includes('smtp')) return this.firm(done, { ...base, mx: mxOf(first) }, flags, null)
    const [answer] = await timed('smtp', () => probeRecipients(this.o.resolver, route.hosts, [parsed.normalized], this.o), ([a]) => describe(a))
    const smtp = answer.reply ? { code: answer.reply.code, enhanced_code: answer.reply.enhanced, message: answer.reply.message.slice(0, 500) } : null
    const extra = { ...base, mx: mxOf(answer.host ?? first), smtp }
    if (answer.kind === 'session') return done(answer.reason, extra)
    switch (answer.outcome) {
      case 'accepted': return this.firm(done, extra, flags, 'accepted')
      case 'mailbox_full': flags.push('mailbox_full'); return done('mailbox_full', extra)
      case 'too_many_recipients': return done('smtp_unavailable', extra)
      default: return done(answer.outcome, extra)
    }
  }

  /**
   * The verdict once nothing found the address invalid: disposable and role flags make it
   * risky; a mailbox accepted by SMTP is valid; without an SMTP answer the mailbox is not
   * known (`unknown`, not charged).
   */
  private firm (done: (r: Reason, e?: Partial<VerificationResult>) => VerificationResult, extra: Partial<VerificationResult>, flags: string[], smtp: 'accepted' | null): VerificationResult {
    if (flags.includes('disposable')) return done('disposable', extra)
    if (smtp === null) return done('smtp_unavailable', { ...extra, retryable: false })
    if (flags.includes('role')) return done('role_account', extra)
    return done('accepted_email', extra)
  }
}

function describe (a: RecipientAnswer): [CheckRecord['outcome'], string] {
  if (a.kind === 'session') return ['error', `${a.reason}: ${a.detail}`]
  const text = `${a.reply.code}${a.reply.enhanced ? ` ${a.reply.enhanced}` : ''} ${a.reply.message}`.slice(0, 300)
  return [a.outcome === 'accepted' ? 'pass' : a.outcome === 'mailbox_full' || a.outcome === 'greylisted' ? 'warn' : 'fail', `${a.host.host}: ${text}`]
}
