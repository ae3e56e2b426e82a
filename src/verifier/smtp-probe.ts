import type { MailHost, MailResolver } from './dns.ts'
import { SmtpSession, SmtpSessionError, type SmtpReply } from './smtp-client.ts'
import { classifyRcpt, classifySessionRefusal, type RcptOutcome } from './classify.ts'
import type { Politeness } from './politeness.ts'
import { isPublicAddress } from '../domain/webhook/target.ts'

export interface ProbeOptions {
  port: number
  helo_name: string
  mail_from: string
  /** Bound on connect, banner and every command (ms). */
  timeout_ms: number
  /** MX hosts tried, in preference order, before a recipient gets a session failure. */
  max_hosts?: number
  /** Recipients per envelope (RFC 5321 §4.5.3.1.8 lets servers cap at 100). */
  rcpt_per_envelope?: number
  /** Recipients per session before it is closed and another opened. */
  rcpt_per_session?: number
  /** STARTTLS when the server offers it (RFC 3207). */
  starttls?: boolean
  /**
   * Connect to MX hosts on loopback, private, link-local and other non-public addresses
   * (tests, on-prem). Off by default: a domain whose MX points there gets `no_connect`
   * without any connection (no SSRF through the probe, which sign-up reaches unauthenticated).
   */
  allow_private_targets?: boolean
  /** Retry after a receiver pushes back (421, 4.7.x), within the deadline; false answers at once. */
  retry_pushback?: boolean
}

export type SessionFailureReason = 'no_connect' | 'timeout' | 'smtp_unavailable' | 'ip_blocked' | 'unexpected_error'

/** The answer for one recipient. */
export type RecipientAnswer =
  /** `asked_at`: when RCPT TO was sent (epoch ms). */
  | { kind: 'rcpt', host: MailHost, reply: SmtpReply, outcome: RcptOutcome, tls: boolean, asked_at: number }
  | { kind: 'session', host: MailHost | null, reply: SmtpReply | null, reason: SessionFailureReason, detail: string }

/** Counters of a prober, for tests, the benchmark and `/metrics`; `by_provider` counts sessions and RCPTs per mail provider (`other` for the rest). */
export interface ProbeStats { sessions: number, envelopes: number, rcpts: number, pushbacks: number, by_provider: Record<string, { sessions: number, rcpts: number }> }

type Failure = Extract<RecipientAnswer, { kind: 'session' }>

function failureOf (host: MailHost | null, err: unknown): Failure {
  if (err instanceof SmtpSessionError) {
    const reason = err.kind === 'no_connect' ? 'no_connect' : err.kind === 'timeout' ? 'timeout' : 'smtp_unavailable'
    return { kind: 'session', host, reply: null, reason, detail: err.message }
  }
  return { kind: 'session', host, reply: null, reason: 'unexpected_error', detail: String(err) }
}

// Pushed back by the receiver: try again later rather than answer.
const isPushBack = (f: Failure): boolean => f.reply !== null && (f.reply.code === 421 || (f.reply.enhanced?.startsWith('4.7.') ?? false))

interface Item { address: string, attempts: number }

/** Where session runners put answers: the callers waiting for each address are told at once. */
interface Answers { has: (address: string) => boolean, set: (address: string, answer: RecipientAnswer) => void }

/**
 * The work of one MX route shared by every caller probing it at the same time: one queue,
 * the sessions working through it, and who waits for which address. A caller that comes
 * while sessions are open adds its recipients to their queue rather than open sessions of
 * its own, so concurrent lists (parts of batches, single jobs) share the sessions of an MX.
 */
interface Lane {
  queue: Item[]
  waiting: Map<string, Array<(a: RecipientAnswer) => void>>
  runners: number
  deadline: number
}

/**
 * Asks SMTP servers about recipients (never DATA), reusing sessions: one session asks
 * `RCPT TO` for many recipients of the same MX, in envelopes of up to `rcpt_per_envelope`
 * with `RSET` between them (RFC 5321 §4.1.1.5), opens another envelope when the server says
 * 452 4.5.3 (too many recipients), and several sessions share one queue per MX up to the
 * politeness limits. A 421 or 4.7.x push-back pauses the MX (adaptive back-off) and the
 * unanswered recipients go back to the queue. With `reuse: false` every recipient gets a
 * session of its own (the naive way, for comparison).
 */
export class SmtpProber {
  private readonly resolver: MailResolver
  private readonly politeness: Politeness
  private readonly o: Required<ProbeOptions>
  readonly stats: ProbeStats = { sessions: 0, envelopes: 0, rcpts: 0, pushbacks: 0, by_provider: {} }
  /** Routes being probed now, by their hosts. */
  private readonly lanes = new Map<string, Lane>()

  constructor (resolver: MailResolver, politeness: Politeness, options: ProbeOptions) {
    this.resolver = resolver
    this.politeness = politeness
    this.o = { max_hosts: 2, rcpt_per_envelope: 50, rcpt_per_session: 500, starttls: true, retry_pushback: true, allow_private_targets: false, ...options }
  }

  /**
   * Probes recipients against the mail hosts `hosts` of one route. `groups` are lists of
   * recipients that belong in one session (a domain's catch-all probe and its addresses):
   * with `reuse`, every group goes into the route's queue (shared with concurrent callers)
   * that up to the politeness limit of sessions work through; without, each group gets a
   * session of its own.
   * `provider` labels the politeness limits; `deadline` (epoch ms) bounds retries after
   * push-backs. Resolves with one answer per recipient address.
   */
  async probe (hosts: readonly MailHost[], provider: string | null, groups: ReadonlyArray<readonly string[]>, options: { reuse: boolean, deadline: number }): Promise<Map<string, RecipientAnswer>> {
    const answers = new Map<string, RecipientAnswer>()
    const tried = hosts.slice(0, this.o.max_hosts)
    if (tried.length === 0 || groups.length === 0) return answers
    if (!options.reuse) {
      await Promise.all(groups.map(g => this.runQueue(tried, provider, g.map(address => ({ address, attempts: 0 })), answers, options.deadline, g.length)))
      return answers
    }
    // Reuse: the route's lane, shared with whoever probes it now.
    const key = tried.map(h => h.host).join(',')
    let lane = this.lanes.get(key)
    if (!lane) {
      lane = { queue: [], waiting: new Map(), runners: 0, deadline: options.deadline }
      this.lanes.set(key, lane)
    }
    lane.deadline = Math.max(lane.deadline, options.deadline)
    const asked = [...new Set(groups.flat())]
    const done = asked.map(address => new Promise<void>(resolve => {
      const l = lane!
      const waiters = l.waiting.get(address)
      const tell = (a: RecipientAnswer): void => { answers.set(address, a); resolve() }
      if (waiters) { waiters.push(tell); return }
      l.waiting.set(address, [tell])
      l.queue.push({ address, attempts: 0 })
    }))
    this.staff(key, lane, tried, provider)
    await Promise.all(done)
    return answers
  }

  /** Starts session runners for a lane up to the politeness limit (one per 4 queued recipients at least). */
  private staff (key: string, lane: Lane, hosts: readonly MailHost[], provider: string | null): void {
    const target = Math.max(1, Math.min(this.politeness.sessionsFor(hosts[0].host, provider), Math.ceil(lane.queue.length / 4)))
    const sink: Answers = {
      has: address => !lane.waiting.has(address),
      set: (address, a) => {
        const waiters = lane.waiting.get(address)
        if (!waiters) return
        lane.waiting.delete(address)
        for (const tell of waiters) tell(a)
      }
    }
    while (lane.runners < target && lane.queue.length > 0) {
      lane.runners++
      void this.runQueue(hosts, provider, lane.queue, sink, lane.deadline, this.o.rcpt_per_session)
        .catch(() => undefined)
        .finally(() => {
          lane.runners--
          // Recipients added while this runner was ending are not left without one.
          if (lane.queue.length > 0) this.staff(key, lane, hosts, provider)
          else if (lane.runners === 0 && lane.waiting.size === 0 && this.lanes.get(key) === lane) this.lanes.delete(key)
        })
    }
  }

  /** One session runner: takes recipients from the shared queue until it is empty. */
  private async runQueue (hosts: readonly MailHost[], provider: string | null, queue: Item[], answers: Answers, deadline: number, perSession: number): Promise<void> {
    let hostIndex = 0
    let lastFailure: Failure | null = null
    while (queue.length > 0) {
      if (hostIndex >= hosts.length) {
        // Every host failed for this runner: the recipients still queued get the failure,
        // unless another runner is still getting answers from them.
        for (const item of queue.splice(0)) answers.set(item.address, lastFailure!)
        return
      }
      const host = hosts[hostIndex]
      const release = await this.politeness.acquire(host.host, provider)
      let outcome: { failure: Failure | null, pushedBack: boolean }
      try {
        outcome = await this.session(host, provider, queue, answers, perSession)
      } finally {
        release()
      }
      if (outcome.failure === null) {
        this.politeness.succeeded(host.host, provider)
        continue
      }
      lastFailure = outcome.failure
      if (outcome.pushedBack) {
        this.stats.pushbacks++
        const pause = this.politeness.pushBack(host.host, provider)
        if (this.o.retry_pushback && Date.now() + pause < deadline) continue
      }
      // Connection refused, timeout, blocked, or out of time for push-backs: next host.
      hostIndex++
    }
  }

  /**
   * One SMTP session with `host`: greeting, optional STARTTLS, then envelopes until the
   * queue is empty or `perSession` recipients were asked. Recipients taken but not
   * answered go back to the front of the queue (at most twice per recipient).
   */
  private async session (host: MailHost, provider: string | null, queue: Item[], answers: Answers, perSession: number): Promise<{ failure: Failure | null, pushedBack: boolean }> {
    const resolved = await this.resolver.addresses(host.host)
    if (resolved.length === 0) return { failure: { kind: 'session', host, reply: null, reason: 'no_connect', detail: `${host.host} has no address` }, pushedBack: false }
    const ips = this.o.allow_private_targets ? resolved : resolved.filter(isPublicAddress)
    if (ips.length === 0) return { failure: { kind: 'session', host, reply: null, reason: 'no_connect', detail: `${host.host} has no public address: not connected` }, pushedBack: false }
    const counted = (this.stats.by_provider[provider ?? 'other'] ??= { sessions: 0, rcpts: 0 })
    this.stats.sessions++
    counted.sessions++
    let session: SmtpSession
    try {
      session = await SmtpSession.connect(ips[0], this.o.port, this.o.timeout_ms)
    } catch (err) {
      return { failure: failureOf(host, err), pushedBack: false }
    }
    const inFlight: Item[] = []
    // Recipients asked but not answered go back to the queue; after 3 tries they keep the failure.
    const requeue = (failure: Failure): void => {
      for (const item of inFlight.splice(0).reverse()) {
        if (answers.has(item.address)) continue
        if (++item.attempts < 3) queue.unshift(item)
        else answers.set(item.address, failure)
      }
    }
    const refused = (reply: SmtpReply, step: string): { failure: Failure, pushedBack: boolean } => {
      const f: Failure = { kind: 'session', host, reply, reason: classifySessionRefusal(reply), detail: `${step} refused: ${reply.code} ${reply.message}`.slice(0, 300) }
      requeue(f)
      return { failure: f, pushedBack: isPushBack(f) }
    }
    try {
      const banner = await session.read()
      if (banner.code !== 220) return refused(banner, 'banner')
      let hello = await session.hello(this.o.helo_name)
      if (hello.code !== 250) return refused(hello, 'HELO')
      if (this.o.starttls && session.extensions.has('STARTTLS')) {
        if (await session.startTls(host.host)) {
          hello = await session.hello(this.o.helo_name)
          if (hello.code !== 250) return refused(hello, 'EHLO after STARTTLS')
        }
      }
      let asked = 0
      while (queue.length > 0 && asked < perSession) {
        const mail = await session.command(`MAIL FROM:<${this.o.mail_from}>`)
        if (mail.code !== 250) return refused(mail, 'MAIL FROM')
        this.stats.envelopes++
        let inEnvelope = 0
        while (queue.length > 0 && inEnvelope < this.o.rcpt_per_envelope && asked < perSession) {
          const item = queue.shift()!
          inFlight.push(item)
          const askedAt = Date.now()
          const reply = await session.command(`RCPT TO:<${item.address}>`)
          this.stats.rcpts++
          counted.rcpts++
          const outcome = classifyRcpt(reply)
          if (outcome === 'too_many_recipients' && inEnvelope > 0) {
            // 452 4.5.3: this envelope is full; ask again in the next one.
            inFlight.pop()
            queue.unshift(item)
            break
          }
          if (reply.code === 421) {
            return refused(reply, 'RCPT TO')
          }
          inFlight.pop()
          answers.set(item.address, { kind: 'rcpt', host, reply, outcome, tls: session.tls, asked_at: askedAt })
          inEnvelope++
          asked++
        }
        if (queue.length > 0 && asked < perSession) {
          const rset = await session.command('RSET')
          if (rset.code !== 250) return refused(rset, 'RSET')
        }
      }
      await session.quit()
      return { failure: null, pushedBack: false }
    } catch (err) {
      session.close()
      const f = failureOf(host, err)
      requeue(f)
      return { failure: f, pushedBack: false }
    }
  }
}
