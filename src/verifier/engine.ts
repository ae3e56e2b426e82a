import { LRUCache } from 'lru-cache'
import { greylistRetryAt } from '../domain/job/greylisting.ts'
import { CHECK_NAMES, type CheckName } from '../domain/checks.ts'
import { localChecks } from './local-checks.ts'
import { describeRoute, type MailHost, type MailResolver, type MailRoute } from './dns.ts'
import { SmtpProber, type ProbeOptions, type ProbeStats } from './smtp-probe.ts'
import { expiredAnswer, type RecipientAnswer } from './recipient-answer.ts'
import { Politeness, DEFAULT_POLITENESS, type PolitenessOptions } from './politeness.ts'
import { providerOf } from './providers.ts'
import { copyResult, type CheckRecord, type Reason, type VerificationResult } from './result.ts'
import { catchAllAddress } from './catch-all.ts'
import { firmReason, rcptCheckOutcome, refusalReason, resultOf } from './verdict.ts'

export interface EngineOptions {
  resolver: MailResolver
  probe: ProbeOptions
  politeness?: PolitenessOptions
  /** `engine`: session reuse, politeness, caches. `naive`: one session per address, no limits, no caches (for comparison). */
  mode?: 'engine' | 'naive'
  /** Result cache per address, ms (0 disables). */
  result_cache_ttl_ms?: number
  /** Results kept in the result cache at most (least recently used go first; default 20,000). */
  result_cache_max?: number
  /** Catch-all answer cache per domain, ms. */
  catch_all_ttl_ms?: number
  /** Greylisting: first retry delay (then doubling) and how long to keep trying, ms. */
  greylist?: { retry_ms: number; deadline_ms: number }
  /** How long to keep retrying after receivers push back (421, 4.7.x), ms. */
  pushback_deadline_ms?: number
  dns_concurrency?: number
  now?: () => Date
}

export interface VerifyRequest {
  email: string
  checks: readonly CheckName[]
}

export interface VerifyManyOptions {
  /**
   * `wait`: greylisted recipients are asked again with back-off within the greylisting
   * deadline (bulk). `defer`: they come back at once as `greylisted` (retryable) and the
   * caller schedules the retry (jobs).
   */
  greylist?: 'wait' | 'defer'
  /**
   * With `defer`: called for each request that comes back greylisted, with when the
   * greylisted answer came (epoch ms): the receiver's window runs from no later than then,
   * so a caller can schedule the retry from it rather than from the end of the call.
   */
  on_greylisted?: (index: number, answered_at: number) => void
  /**
   * Called with each request's result as soon as it is decided (the local checks and the
   * cache before any lookup, DNS when the lookups are done, SMTP when its route is done),
   * once, and never after the call has returned or thrown: a caller answering each request
   * on its own (the jobs' micro-batcher) need not wait for the slowest route.
   */
  on_result?: (index: number, result: VerificationResult) => void
  /**
   * The caller's greylisting deadline (epoch ms), for its retry of greylisted recipients: no
   * recipient is asked from then on, and one not asked by then comes back `greylisted` (its
   * last answer; the `smtp` check says the deadline passed), so that the call ends at the
   * deadline rather than a round after it.
   */
  stop_at?: number
  /**
   * The requests were greylisted before (the caller's retry): per MX route one is asked
   * first, and the others only once it is not greylisted any more (see `retryGreylisted`).
   */
  greylist_retry?: boolean
}

export interface EngineStats extends ProbeStats {
  result_cache_hits: number
  catch_all_cache_hits: number
  greylist_rounds: number
}

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, Math.max(0, ms)))

/** Per-address working state while a list is verified. */
interface Work {
  email: string
  checks: readonly CheckName[]
  records: CheckRecord[]
  flags: string[]
  normalized: string | null
  local: string
  domain: string
  did_you_mean: string | null
  mx: VerificationResult['mx']
}

/**
 * The verification engine (docs/design/verification.md). `verifyMany` runs the requested checks on a
 * list: syntax, typo, disposable, role and free per address; DNS once per domain (cached
 * by TTL); then SMTP grouped by MX, so one session asks about many addresses, a catch-all
 * probe (a random local part) runs once per domain and is cached, and politeness limits
 * hold per MX host and provider. Results are cached per address. It never throws for
 * any input: network failures become `unknown` reasons.
 */
export class VerificationEngine {
  private readonly o: EngineOptions
  private readonly prober: SmtpProber
  /** Results that asked the network, per address and checks, the most recent `result_cache_max` (a bulk list must not fill the memory). */
  private readonly resultCache: LRUCache<string, { result: VerificationResult; expires: number }>
  /** Catch-all status per domain, the most recent 100,000. */
  // Counted through `maxSize`, not `max` (which preallocates its slots at start-up: see DnsClient's caches).
  private readonly catchAll = new LRUCache<string, { accepts: boolean; expires: number }>({ maxSize: 100_000, sizeCalculation: () => 1 })
  private readonly counters = { result_cache_hits: 0, catch_all_cache_hits: 0, greylist_rounds: 0 }

  constructor(options: EngineOptions) {
    this.o = options
    this.resultCache = new LRUCache({ maxSize: options.result_cache_max ?? 20_000, sizeCalculation: () => 1 })
    // Naive mode asks as the open-source reference does: one recipient per round trip.
    this.prober = new SmtpProber(
      options.resolver,
      new Politeness(options.politeness ?? DEFAULT_POLITENESS),
      options.mode === 'naive' ? { ...options.probe, pipeline_rcpt: 1 } : options.probe
    )
  }

  get stats(): EngineStats {
    return { ...this.prober.stats, ...this.counters }
  }

  private get naive(): boolean {
    return this.o.mode === 'naive'
  }
  private now(): Date {
    return this.o.now ? this.o.now() : new Date()
  }

  /** Verifies one address (greylisting deferred to the caller by default). */
  async verify(email: string, checks: readonly CheckName[], options: VerifyManyOptions = {}): Promise<VerificationResult> {
    return (await this.verifyMany([{ email, checks }], options))[0]
  }

  async verifyMany(requests: readonly VerifyRequest[], options: VerifyManyOptions = {}): Promise<VerificationResult[]> {
    const results: Array<VerificationResult | null> = requests.map(() => null)
    const works: Work[] = []
    const pending: number[] = []
    // `on_result` is told of each result once, as soon as it is decided, and never after this call has ended.
    let over = false
    const give = (i: number): void => {
      if (!over) options.on_result?.(i, results[i]!)
    }

    // 1. Local checks and the result cache.
    for (let i = 0; i < requests.length; i++) {
      const req = requests[i]
      const local = localChecks(req.email, req.checks)
      const w: Work = {
        email: req.email,
        checks: req.checks,
        records: local.records,
        flags: local.flags,
        normalized: local.normalized,
        local: local.local,
        domain: local.domain,
        did_you_mean: local.did_you_mean,
        mx: null
      }
      works.push(w)
      if (!local.ok) {
        results[i] = this.done(w, 'invalid_syntax')
        continue
      }
      const hit = this.cachedResult(w)
      if (hit) {
        results[i] = hit
        continue
      }
      if (!req.checks.includes('dns')) {
        results[i] = this.firm(w, null)
        continue
      }
      pending.push(i)
    }
    // Bad syntax, the cache's answers and the checks without DNS are given before any lookup.
    for (let i = 0; i < results.length; i++) if (results[i] !== null) give(i)

    try {
      return await this.networkPhases(works, results, pending, options, give)
    } finally {
      over = true
    }
  }

  /** Steps 2 and 3 of `verifyMany`: DNS for `pending`, then SMTP; `give` hands each result on as it is decided. */
  private async networkPhases(
    works: Work[],
    results: Array<VerificationResult | null>,
    pending: number[],
    options: VerifyManyOptions,
    give: (i: number) => void
  ): Promise<VerificationResult[]> {
    // 2. DNS, once per domain.
    const routes = await this.routes([...new Set(pending.map(i => works[i].domain))])
    const smtpPending: number[] = []
    for (const i of pending) {
      const w = works[i]
      const { route, ms } = routes.get(w.domain)!
      w.records.push({ name: 'dns', duration_ms: ms, ...describeRoute(route) })
      switch (route.kind) {
        case 'nxdomain':
          results[i] = this.done(w, 'invalid_domain')
          continue
        case 'null_mx':
        case 'no_mail_server':
          results[i] = this.done(w, 'no_mail_server')
          continue
        case 'error':
          results[i] = this.done(w, route.code === 'ETIMEOUT' ? 'timeout' : 'unexpected_error')
          continue
      }
      const first = route.hosts[0]
      w.mx = { host: first.host, preference: first.preference, provider: providerOf(first.host) }
      if (!w.checks.includes('smtp')) {
        results[i] = this.firm(w, null)
        continue
      }
      smtpPending.push(i)
    }
    for (const i of pending) if (results[i] !== null) give(i)

    // Results decided without SMTP are kept now, while the routes' sessions wait on the network.
    for (let i = 0; i < results.length; i++) {
      const r = results[i]
      if (r !== null && !r.cached) this.remember(works[i], r)
    }

    // 3. SMTP, grouped by MX; greylisted recipients asked again within the deadline. Each
    // route's results are made as soon as it is done, not after the slowest route.
    await this.smtpPhase(
      works,
      smtpPending,
      routes,
      { waitGreylist: options.greylist === 'wait', stopAt: options.stop_at, greylistRetry: options.greylist_retry },
      (i, got) => {
        const r = this.fromSmtp(works[i], got)
        results[i] = r
        this.remember(works[i], r)
        if (options.on_greylisted && got.answer.kind === 'rcpt' && got.answer.outcome === 'greylisted') options.on_greylisted(i, got.answer.answered_at)
        give(i)
      }
    )
    return results as VerificationResult[]
  }

  /** Each domain's mail route, `dns_concurrency` lookups at a time (with its first host's address resolved). */
  private async routes(domains: string[]): Promise<Map<string, { route: MailRoute; ms: number }>> {
    const out = new Map<string, { route: MailRoute; ms: number }>()
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < domains.length) {
        const d = domains[next++]
        const t0 = performance.now()
        const route = await this.o.resolver.route(d).catch((): MailRoute => ({ kind: 'error', code: 'EUNKNOWN' }))
        out.set(d, { route, ms: round1(performance.now() - t0) })
        // Resolve the first MX host now, at this pace, rather than all at once when sessions open.
        if (route.kind === 'mx' || route.kind === 'implicit') await this.o.resolver.addresses(route.hosts[0].host).catch(() => [])
      }
    }
    await Promise.all(Array.from({ length: Math.min(domains.length, this.o.dns_concurrency ?? 64) }, worker))
    return out
  }

  /**
   * SMTP probes for the addresses `indices`, one task per MX route (all routes at once).
   * Within a route the addresses of each domain share a queue (and sessions) with the
   * domain's catch-all probe; in naive mode each address gets its own session, in input
   * order. With `waitGreylist`, a route's greylisted recipients are asked again once the
   * retry delay has passed since they were asked (doubling each time) until the deadline.
   * `settle` is called with each address's answer once its route is done (every round).
   */
  private async smtpPhase(
    works: Work[],
    indices: number[],
    routes: Map<string, { route: MailRoute }>,
    o: { waitGreylist: boolean; stopAt?: number; greylistRetry?: boolean },
    settle: (i: number, got: SmtpOutcome) => void
  ): Promise<void> {
    const { waitGreylist, stopAt, greylistRetry } = o
    // Engine: one task per MX route. Naive: one task per address, started in input order.
    const tasks = new Map<string, RouteTask>()
    for (const i of indices) {
      const w = works[i]
      const route = routes.get(w.domain)!.route as Extract<MailRoute, { hosts: MailHost[] }>
      const key = this.naive ? String(i) : route.hosts.map(h => h.host).join(',')
      const g = tasks.get(key) ?? { hosts: route.hosts, provider: providerOf(route.hosts[0].host), domains: new Map() }
      tasks.set(key, g)
      const ofDomain = g.domains.get(w.domain)
      if (ofDomain) ofDomain.push(i)
      else g.domains.set(w.domain, [i])
    }
    const greylist = this.o.greylist ?? { retry_ms: 60_000, deadline_ms: 1_800_000 }
    const deadline = Math.min(Date.now() + greylist.deadline_ms, stopAt ?? Number.POSITIVE_INFINITY)
    const pushbackDeadline = Date.now() + (this.o.pushback_deadline_ms ?? 60_000)

    await Promise.all(
      [...tasks.values()].map(async g => {
        for (const [i, got] of await this.probeRoute(g, works, { waitGreylist, deadline, pushbackDeadline, greylist, stopAt, greylistRetry })) settle(i, got)
      })
    )
  }

  /**
   * The rounds of one MX route (see `smtpPhase`). @returns each address's last answer, by
   * its index in `works`.
   */
  private async probeRoute(
    g: RouteTask,
    works: Work[],
    o: {
      waitGreylist: boolean
      deadline: number
      pushbackDeadline: number
      greylist: { retry_ms: number; deadline_ms: number }
      stopAt?: number
      greylistRetry?: boolean
    }
  ): Promise<Map<number, SmtpOutcome>> {
    const { waitGreylist, deadline, pushbackDeadline, greylist, stopAt } = o
    const out = new Map<number, SmtpOutcome>()
    let todo = g.domains
    const catchAll = new Map<string, boolean | null>()
    // When each recipient's first answer came: greylisting windows run from the first try.
    const firstAnswered = new Map<string, number>()
    // When each greylisted recipient is asked again (a round after the first), and how
    // long the first round took from its start to its first RCPT (opening the session).
    let due: Map<string, number> | undefined
    let lead = 0
    // Each domain's catch-all probe, one address for the whole call (its name changes with
    // the date: a round after midnight asks the address the window runs for).
    const probeAddresses = new Map<string, string>()
    const probeOf = (domain: string): string => {
      let p = probeAddresses.get(domain)
      if (p === undefined) probeAddresses.set(domain, (p = catchAllAddress(domain)))
      return p
    }
    for (let attempt = 0; ; attempt++) {
      const groups: string[][] = []
      const probes = new Map<string, string>()
      for (const [domain, idx] of todo) {
        const wantsCatchAll = idx.some(i => works[i].checks.includes('catch_all'))
        const known = catchAll.get(domain) ?? this.knownCatchAll(domain)
        const probe = wantsCatchAll && known === null ? probeOf(domain) : null
        if (probe) probes.set(domain, probe)
        groups.push([...(probe ? [probe] : []), ...idx.map(i => works[i].normalized!)])
      }
      const t0 = performance.now()
      const started = Date.now()
      // A retry round (or the caller's retry) asks nothing after the greylisting deadline.
      const until = attempt > 0 ? deadline : stopAt
      const asking = { reuse: !this.naive, deadline: pushbackDeadline, due, until }
      const answers =
        attempt > 0 || o.greylistRetry ? await this.retryGreylisted(g, groups, asking) : await this.prober.probe(g.hosts, g.provider, groups, asking)
      const ms = round1(performance.now() - t0)
      for (const [address, a] of answers) if (a.kind === 'rcpt' && !firstAnswered.has(address)) firstAnswered.set(address, a.answered_at)
      if (attempt === 0) {
        let first = Number.POSITIVE_INFINITY
        for (const a of answers.values()) if (a.kind === 'rcpt') first = Math.min(first, a.answered_at)
        lead = Number.isFinite(first) ? Math.min(10_000, Math.max(0, first - started)) : 0
      }
      const again = new Map<string, number[]>()
      // Probes greylisted this round: asked again with their domain's addresses (below).
      const greylistedProbes = new Map<string, string>()
      for (const [domain, idx] of todo) {
        const probe = probes.get(domain)
        if (probe) {
          const a = answers.get(probe)
          if ((a?.kind === 'rcpt' && a.outcome === 'greylisted') || (a?.kind === 'session' && a.expired)) greylistedProbes.set(domain, probe)
          const status =
            a?.kind === 'rcpt'
              ? a.outcome === 'accepted'
                ? true
                : ['mailbox_not_found', 'rejected_email', 'mailbox_disabled'].includes(a.outcome)
                  ? false
                  : null
              : null
          catchAll.set(domain, status)
          if (status !== null && !this.naive) this.catchAll.set(domain, { accepts: status, expires: Date.now() + (this.o.catch_all_ttl_ms ?? 6 * 3_600_000) })
        }
        for (const i of idx) {
          let answer: RecipientAnswer = answers.get(works[i].normalized!) ?? {
            kind: 'session',
            host: null,
            reply: null,
            reason: 'unexpected_error',
            detail: 'no answer'
          }
          // Not asked again (the deadline came, or the route still greylists): its greylisted answer stands.
          const last = answer.kind === 'session' && answer.expired ? out.get(i) : undefined
          if (last) answer = last.answer
          else out.set(i, { answer, catch_all: catchAll.get(domain) ?? this.knownCatchAll(domain), ms })
          if (!waitGreylist || answer.kind !== 'rcpt' || answer.outcome !== 'greylisted') continue
          const greylisted = again.get(domain)
          if (greylisted) greylisted.push(i)
          else again.set(domain, [i])
        }
      }
      if (again.size === 0) return out
      // A round that ended at or after the deadline was the last (asked at the deadline).
      if (Date.now() >= deadline) return out
      // Each is asked again once its own window has passed since its first answer (at the
      // deadline at the latest): the sessions open that long before the first of them is
      // due, and each recipient waits in them for its time. The last round starts a round's
      // length before the deadline, so that it ends by then rather than a round after it.
      due = new Map()
      const lastStart = Math.max(Date.now(), deadline - ms)
      let earliest = deadline
      // The catch-all probe of a domain that greylisted it is asked again too (it comes back
      // while the domain's status is unknown), and waits for its own window like the others:
      // asked before it, it would be greylisted again and the domain's status never known.
      const probesAgain = [...again.keys()].flatMap(domain => greylistedProbes.get(domain) ?? [])
      for (const address of [...[...again.values()].flat().map(i => works[i].normalized!), ...probesAgain]) {
        // Before the deadline (checked above): a time, never null.
        const first = firstAnswered.get(address) ?? Date.now()
        const at = Math.min(greylistRetryAt(first, Date.now(), greylist.retry_ms, attempt, deadline) ?? deadline, lastStart)
        due.set(address, at)
        earliest = Math.min(earliest, at)
      }
      this.counters.greylist_rounds++
      await sleep(earliest - lead - Date.now())
      todo = again
    }
  }

  /**
   * A retry of greylisted recipients at one MX route: the first of them (the earliest due)
   * is asked alone; while the receiver still greylists it, the others are not asked (each is
   * answered `expired`: its greylisted answer stands), and once it does not, they are. The
   * receiver's window is not announced and the retries come closer together (1.25×) than a
   * doubling back-off: one refusal a retry, not one per recipient. Receivers greylist per
   * (client, sender, recipient), and the first asked was first seen: when its window has
   * passed, theirs has (or is about to, waited for by their due times).
   */
  private async retryGreylisted(
    g: RouteTask,
    groups: string[][],
    asking: { reuse: boolean; deadline: number; due?: ReadonlyMap<string, number>; until?: number }
  ): Promise<Map<string, RecipientAnswer>> {
    const all = groups.flat()
    if (all.length <= 1 || this.naive) return await this.prober.probe(g.hosts, g.provider, groups, asking)
    const due = asking.due
    const first = due ? all.reduce((a, b) => ((due.get(b) ?? 0) < (due.get(a) ?? 0) ? b : a)) : all[0]
    const answers = await this.prober.probe(g.hosts, g.provider, [[first]], asking)
    const a = answers.get(first)
    if ((a?.kind === 'rcpt' && a.outcome === 'greylisted') || (a?.kind === 'session' && a.expired)) {
      const host = a.host
      for (const address of all) if (address !== first) answers.set(address, expiredAnswer(host, 'not asked again yet: the server still greylists this route'))
      return answers
    }
    const rest = groups.map(group => group.filter(address => address !== first)).filter(group => group.length > 0)
    for (const [address, answer] of await this.prober.probe(g.hosts, g.provider, rest, asking)) answers.set(address, answer)
    return answers
  }

  private knownCatchAll(domain: string): boolean | null {
    if (this.naive) return null
    const c = this.catchAll.get(domain)
    if (!c || c.expires <= Date.now()) return null
    this.counters.catch_all_cache_hits++
    return c.accepts
  }

  private fromSmtp(w: Work, got: SmtpOutcome): VerificationResult {
    const { answer, catch_all: catchAll, ms } = got
    const records = w.records.filter(r => r.name !== 'smtp' && r.name !== 'catch_all')
    const smtpDetail =
      answer.kind === 'session'
        ? { outcome: 'error' as const, detail: `${answer.reason}: ${answer.detail}` }
        : {
            outcome: rcptCheckOutcome(answer.outcome),
            detail:
              `${answer.host.host}${answer.tls ? ' (TLS)' : answer.clear_text ? ` (clear text: ${answer.clear_text})` : ''}: ${answer.reply.code}${answer.reply.enhanced ? ` ${answer.reply.enhanced}` : ''} ${answer.reply.message}`.slice(
                0,
                300
              )
          }
    records.push({ name: 'smtp', duration_ms: ms, ...smtpDetail })
    if (w.checks.includes('catch_all')) {
      records.push({
        name: 'catch_all',
        duration_ms: 0,
        outcome: catchAll === null ? 'error' : catchAll ? 'warn' : 'pass',
        detail: catchAll === null ? 'catch-all status unknown' : catchAll ? 'the domain accepts any address' : 'the domain rejects unknown addresses'
      })
    }
    const view: Work = { ...w, records, flags: [...w.flags] }
    if (answer.host) view.mx = { host: answer.host.host, preference: answer.host.preference, provider: providerOf(answer.host.host) }
    const smtp = answer.reply ? { code: answer.reply.code, enhanced_code: answer.reply.enhanced, message: answer.reply.message.slice(0, 500) } : null
    // Expired: greylisted before, and the caller's deadline came before it was asked again.
    if (answer.kind === 'session') return this.done(view, answer.expired ? 'greylisted' : answer.reason, { smtp })
    if (answer.outcome === 'accepted') {
      if (w.checks.includes('catch_all') && catchAll === true) view.flags.push('accept_all')
      return this.firm(view, 'accepted', { smtp })
    }
    if (answer.outcome === 'mailbox_full') view.flags.push('mailbox_full')
    return this.done(view, refusalReason(answer.outcome), { smtp })
  }

  /** The verdict once nothing found the address invalid (`firmReason`); without SMTP asked for (`smtp` null), decided from the checks that ran, not worth retrying. */
  private firm(w: Work, smtp: 'accepted' | null, extra: Partial<VerificationResult> = {}): VerificationResult {
    return this.done(w, firmReason(w.flags, w.did_you_mean, smtp === 'accepted' ? 'accepted' : 'not_requested'), { ...extra, smtp_requested: smtp !== null })
  }

  private done(w: Work, reason: Reason, extra: Partial<VerificationResult> & { smtp_requested?: boolean } = {}): VerificationResult {
    return resultOf(
      { email: w.email, normalized: w.normalized, flags: w.flags, did_you_mean: w.did_you_mean, mx: w.mx, checks: w.records },
      reason,
      this.now(),
      extra
    )
  }

  private cacheKey(w: Work): string {
    return `${w.normalized!.toLowerCase()}|${checksKey(w.checks)}`
  }

  /**
   * Whether a result is worth keeping: only one that asked the network (DNS or SMTP) saves
   * work when it is asked again; the local checks alone cost less to run again than a
   * cached copy costs to keep (a list of distinct addresses would fill the cache with them).
   */
  private cacheable(w: Work): boolean {
    return !this.naive && w.checks.some(c => NETWORK_CHECKS.has(c))
  }

  private cachedResult(w: Work): VerificationResult | null {
    if (!this.cacheable(w) || !(this.o.result_cache_ttl_ms ?? 3_600_000)) return null
    const hit = this.resultCache.get(this.cacheKey(w))
    if (!hit || hit.expires <= Date.now()) return null
    this.counters.result_cache_hits++
    return { ...copyResult(hit.result), email: w.email, cached: true }
  }

  private remember(w: Work, r: VerificationResult): void {
    const ttl = this.o.result_cache_ttl_ms ?? 3_600_000
    if (!this.cacheable(w) || ttl <= 0 || r.retryable || w.normalized === null) return
    this.resultCache.set(this.cacheKey(w), { result: copyResult(r), expires: Date.now() + ttl })
  }
}

/** One bit a check (its place in CHECK_NAMES): a set of checks in any order is one number. */
const CHECK_BITS = Object.fromEntries(CHECK_NAMES.map((c, i) => [c, 1 << i])) as Readonly<Record<CheckName, number>>

/** The checks' part of a result's cache key: their bits (the same set in any order is one key). */
function checksKey(checks: readonly CheckName[]): number {
  let key = 0
  for (const c of checks) key |= CHECK_BITS[c]
  return key
}

/** The checks that ask the network (DNS, then the mail server). */
const NETWORK_CHECKS: ReadonlySet<CheckName> = new Set(['dns', 'smtp', 'catch_all'])

/** One MX route's work: its hosts, its provider (politeness) and its addresses by domain (indexes into the call's requests). */
type RouteTask = { hosts: MailHost[]; provider: string | null; domains: Map<string, number[]> }

/** What SMTP said of one address: its recipient's answer (or the session's failure), the domain's catch-all status, and the route's time (ms). */
type SmtpOutcome = { answer: RecipientAnswer; catch_all: boolean | null; ms: number }

function round1(ms: number): number {
  return Math.round(ms * 10) / 10
}
