import { LRUCache } from 'lru-cache'
import type { MailHost, MailResolver } from './dns.ts'
import { SmtpSession, SmtpSessionError, type SmtpReply } from './smtp-client.ts'
import { classifyRcpt, classifySessionRefusal } from './classify.ts'
import { expiredAnswer, failureOf, isPushBack, type Failure, type RecipientAnswer } from './recipient-answer.ts'
import type { Politeness } from './politeness.ts'
import { isPublicAddress } from '../domain/webhook/target.ts'
import { expireFront, isExpired, itemOf, lingerIn, type Item, type Lane } from './lanes.ts'
import { EgressRoutes } from './egress.ts'

export interface ProbeOptions {
  port: number
  /** HELO name and MAIL FROM of the direct route (when `routes` is absent). */
  helo_name: string
  mail_from: string
  /**
   * The egress routes (direct or through SOCKS5 proxies, each with its HELO name and MAIL
   * FROM); absent: one direct route with `helo_name` and `mail_from`.
   */
  routes?: EgressRoutes
  /** Bound on connect, banner and every command (ms). */
  timeout_ms: number
  /** MX hosts tried, in preference order, before a recipient gets a session failure. */
  max_hosts?: number
  /** Recipients per envelope (RFC 5321 §4.5.3.1.8 lets servers cap at 100). */
  rcpt_per_envelope?: number
  /** Recipients per session before it is closed and another opened. */
  rcpt_per_session?: number
  /**
   * Refused recipients (any reply to RCPT but 2xx) per session before it is closed and
   * another opened: under the receiver's error limits (Postfix slows every reply after
   * `smtpd_soft_error_limit` = 10 and hangs up after `smtpd_hard_error_limit` = 20). Default 8.
   */
  errors_per_session?: number
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
  /**
   * How long (ms) a shared session whose queue ran dry stays open for recipients that other
   * callers add to its route meanwhile (the next part of a batch, a retry after
   * greylisting), instead of quitting and connecting again: fewer sessions, and no
   * reconnection that the receiver, still counting the old one, turns away with 421.
   */
  linger_ms?: number
  /**
   * RCPT TO commands sent together when the server announces PIPELINING (RFC 2920 §3.1:
   * RCPT TO may be pipelined; replies come in order): one round trip for a window instead
   * of one each. 1 sends them one at a time (as without PIPELINING).
   */
  pipeline_rcpt?: number
  /**
   * Told when a route's SOCKS5 proxy fails a connection (`route`: its name; `detail`: the
   * proxy's address and what it said). For the operator's log only: the recipient's answer
   * says `proxy_error` without naming the proxy (customers never see operators' infrastructure).
   */
  on_proxy_error?: (route: string, detail: string) => void
}

/** Counters of a prober, for tests, the benchmark and `/metrics`; `by_provider` counts sessions and RCPTs per mail provider (`other` for the rest). */
export interface ProbeStats {
  sessions: number
  envelopes: number
  rcpts: number
  pushbacks: number
  by_provider: Record<string, { sessions: number; rcpts: number }>
  /** Sessions opened per egress route (a session is counted once its connection is made), and connections its proxy failed. */
  by_route: Record<string, { sessions: number; proxy_errors: number }>
}

/**
 * How a session ended: `answered` recipients got their answer in it; `tls_failed`: the
 * STARTTLS handshake failed, so the session is over and a clear-text one may follow.
 */
interface SessionOutcome {
  failure: Failure | null
  pushedBack: boolean
  /** The address of a receiver that limited our recipient rate in this session (it is left alone for its window). */
  rate_limited?: string
  answered: number
  tls_failed?: boolean
}

/** Where session runners put answers: the callers waiting for each address are told at once. */
interface Answers {
  has: (address: string) => boolean
  set: (address: string, answer: RecipientAnswer) => void
}

/**
 * What a session runner works through: the queue it shares, where answers go, how many
 * recipients one session asks at most, how many runners share the queue now (a window is
 * at most a runner's share), and the lane's linger (wait for recipients added meanwhile).
 */
interface RunnerWork {
  queue: Item[]
  answers: Answers
  perSession: number
  sharers: () => number
  more?: (ms: number) => Promise<boolean>
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
  readonly stats: ProbeStats = { sessions: 0, envelopes: 0, rcpts: 0, pushbacks: 0, by_provider: {}, by_route: {} }
  private readonly routes: EgressRoutes
  /** Routes being probed now, by their hosts. */
  private readonly lanes = new Map<string, Lane>()
  /** MX hosts whose STARTTLS handshake failed lately, and how: asked in clear text for an hour. */
  private readonly tlsFailed = new LRUCache<string, string>({ max: 10_000, ttl: 3_600_000 })

  constructor(resolver: MailResolver, politeness: Politeness, options: ProbeOptions) {
    this.resolver = resolver
    this.politeness = politeness
    this.o = {
      max_hosts: 2,
      rcpt_per_envelope: 50,
      rcpt_per_session: 500,
      errors_per_session: 8,
      starttls: true,
      retry_pushback: true,
      allow_private_targets: false,
      linger_ms: 250,
      pipeline_rcpt: 10,
      on_proxy_error: () => undefined,
      ...options
    } as Required<ProbeOptions>
    this.routes =
      options.routes ??
      new EgressRoutes([], { name: 'default', proxy: null, helo_name: options.helo_name, mail_from: options.mail_from, providers: [], mx: [] })
  }

  /**
   * Probes recipients against the mail hosts `hosts` of one route. `groups` are lists of
   * recipients that belong in one session (a domain's catch-all probe and its addresses):
   * with `reuse`, every group goes into the route's queue (shared with concurrent callers)
   * that up to the politeness limit of sessions work through; without, each group gets a
   * session of its own.
   * `provider` labels the politeness limits; `deadline` (epoch ms) bounds retries after
   * push-backs; `until` (epoch ms): no recipient of this call is asked from then on, each
   * not asked by then is answered `expired` (a greylisting retry's deadline). Resolves with
   * one answer per recipient address.
   */
  async probe(
    hosts: readonly MailHost[],
    provider: string | null,
    groups: ReadonlyArray<readonly string[]>,
    options: { reuse: boolean; deadline: number; due?: ReadonlyMap<string, number>; until?: number }
  ): Promise<Map<string, RecipientAnswer>> {
    const answers = new Map<string, RecipientAnswer>()
    const tried = hosts.slice(0, this.o.max_hosts)
    if (tried.length === 0 || groups.length === 0) return answers
    if (!options.reuse) {
      await Promise.all(
        groups.map(g =>
          this.runQueue(
            tried,
            provider,
            { queue: g.map(address => itemOf(address, options.due?.get(address), options.until)), answers, perSession: g.length, sharers: () => 1 },
            options.deadline
          )
        )
      )
      return answers
    }
    // Reuse: the route's lane, shared with whoever probes it now.
    const key = tried.map(h => h.host).join(',')
    let lane = this.lanes.get(key)
    if (!lane) {
      lane = { queue: [], waiting: new Map(), runners: 0, deadline: options.deadline, wakers: [] }
      this.lanes.set(key, lane)
    }
    lane.deadline = Math.max(lane.deadline, options.deadline)
    const asked = [...new Set(groups.flat())]
    const done = asked.map(
      address =>
        new Promise<void>(resolve => {
          const l = lane!
          const waiters = l.waiting.get(address)
          const tell = (a: RecipientAnswer): void => {
            answers.set(address, a)
            resolve()
          }
          if (waiters) {
            waiters.push(tell)
            return
          }
          l.waiting.set(address, [tell])
          l.queue.push(itemOf(address, options.due?.get(address), options.until))
        })
    )
    for (const wake of lane.wakers.splice(0)) wake()
    this.staff(key, lane, tried, provider)
    await Promise.all(done)
    return answers
  }

  /** Starts session runners for a lane up to the politeness limit (one per 4 queued recipients at least). */
  private staff(key: string, lane: Lane, hosts: readonly MailHost[], provider: string | null): void {
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
      void this.runQueue(
        hosts,
        provider,
        { queue: lane.queue, answers: sink, perSession: this.o.rcpt_per_session, sharers: () => lane.runners, more: lingerIn(lane) },
        lane.deadline
      )
        .catch(() => undefined)
        .finally(() => {
          lane.runners--
          // Recipients added while this runner was ending are not left without one.
          if (lane.queue.length > 0) this.staff(key, lane, hosts, provider)
          else if (lane.runners === 0 && lane.waiting.size === 0 && this.lanes.get(key) === lane) this.lanes.delete(key)
        })
    }
  }

  /** One session runner: takes recipients from the shared queue until it is empty, across the hosts in order until `deadline` (push-backs). */
  private async runQueue(hosts: readonly MailHost[], provider: string | null, work: RunnerWork, deadline: number): Promise<void> {
    const { queue, answers } = work
    let hostIndex = 0
    let lastFailure: Failure | null = null
    let clearTextTried = false
    while (queue.length > 0) {
      if (hostIndex >= hosts.length) {
        // Every host failed for this runner: the recipients still queued get the failure,
        // unless another runner is still getting answers from them.
        for (const item of queue.splice(0)) answers.set(item.address, lastFailure!)
        return
      }
      const host = hosts[hostIndex]
      const release = await this.politeness.acquire(host.host, provider)
      // Recipients whose deadline passed while this runner waited are not asked.
      expireFront(queue, address => answers.set(address, expiredAnswer(host)))
      // The other runners may have taken everything while this one waited for its slot: no session that would ask nothing.
      if (queue.length === 0) {
        release()
        return
      }
      let outcome: SessionOutcome
      try {
        outcome = await this.session(host, provider, work)
      } finally {
        // The host's and provider's slots come back a moment later (politeness `slot_reuse_grace_ms`).
        release()
      }
      if (outcome.failure === null) {
        this.politeness.succeeded(host.host, provider)
        continue
      }
      lastFailure = outcome.failure
      if (outcome.pushedBack) {
        this.stats.pushbacks++
        const pause =
          outcome.rate_limited === undefined
            ? this.politeness.pushBack(host.host, provider)
            : this.politeness.rateLimited(host.host, provider, outcome.rate_limited, outcome.answered)
        if (this.o.retry_pushback && Date.now() + pause < deadline) continue
      } else if (outcome.tls_failed === true && !clearTextTried) {
        // The TLS handshake failed: the same host again, in clear text (the session skips STARTTLS now).
        clearTextTried = true
        continue
      } else if (outcome.answered > 0) {
        // The server hung up after answering some recipients: the rest in a new session on the
        // same host, as after any lost connection (RFC 5321 §3.8). Each retry answers one more at least.
        continue
      }
      // Connection refused, timeout, blocked, or out of time for push-backs: next host.
      hostIndex++
      clearTextTried = false
    }
  }

  /**
   * One SMTP session with `host`: greeting, optional STARTTLS, then envelopes until the
   * queue is empty or `perSession` recipients were asked. When the server announces
   * PIPELINING (RFC 2920), RCPT TO commands go in windows of `pipeline_rcpt` per write and
   * their replies are read in order; a 452 that fills the envelope sends the rest of the
   * window to the next one. Recipients taken but not answered (the connection lost
   * mid-window) go back to the front of the queue (at most twice per recipient).
   *
   * STARTTLS (RFC 3207) when offered: a refusal (454, §4: the client decides whether to go
   * on) lets the session go on in clear text; a failed handshake ends it (§4: the client
   * aborts the connection) and marks the host, so that the next session asks in clear text
   * (the probe carries no message). Either way the answers say why they were asked without
   * TLS (`clear_text`).
   */
  private async session(host: MailHost, provider: string | null, work: RunnerWork): Promise<SessionOutcome> {
    const answered = 0
    let resolved: string[]
    try {
      resolved = await this.resolver.addresses(host.host)
    } catch (err) {
      // DNS did not say where the host is: a DNS timeout is a timeout, anything else unexpected.
      const code = (err as { code?: string }).code
      return {
        failure: {
          kind: 'session',
          host,
          reply: null,
          reason: code === 'ETIMEOUT' ? 'timeout' : 'unexpected_error',
          detail: err instanceof Error ? err.message : String(err)
        },
        pushedBack: false,
        answered
      }
    }
    if (resolved.length === 0)
      return { failure: { kind: 'session', host, reply: null, reason: 'no_connect', detail: `${host.host} has no address` }, pushedBack: false, answered }
    const ips = this.o.allow_private_targets ? resolved : resolved.filter(isPublicAddress)
    if (ips.length === 0)
      return {
        failure: { kind: 'session', host, reply: null, reason: 'no_connect', detail: `${host.host} has no public address: not connected` },
        pushedBack: false,
        answered
      }
    // The machine behind the name: MX names that differ may point at one server, whose limit counts our sessions by address.
    const releaseAddress = await this.politeness.acquireAddress(ips[0])
    try {
      return await this.sessionAt(host, ips, provider, work)
    } finally {
      releaseAddress()
    }
  }

  /** The session itself, once `host`'s addresses are known and a slot of the first one is held. */
  private async sessionAt(host: MailHost, ips: readonly string[], provider: string | null, work: RunnerWork): Promise<SessionOutcome> {
    const { queue, answers, perSession, sharers, more } = work
    let answered = 0
    const counted = (this.stats.by_provider[provider ?? 'other'] ??= { sessions: 0, rcpts: 0 })
    const route = this.routes.routeFor(provider, host.host)
    const byRoute = (this.stats.by_route[route.name] ??= { sessions: 0, proxy_errors: 0 })
    this.stats.sessions++
    counted.sessions++
    let session: SmtpSession | null = null
    let connectedTo = ips[0]
    let connectError: unknown = null
    // A multihomed host (A and AAAA, or several of either): when an address cannot be
    // reached, the next one (RFC 5321 §5.1: try at least two addresses). A proxy that
    // fails fails for every address: the first failure is the answer.
    for (const ip of ips.slice(0, 2)) {
      try {
        session = await SmtpSession.connect(ip, this.o.port, this.o.timeout_ms, route)
        connectedTo = ip
        break
      } catch (err) {
        connectError = err
        if (err instanceof SmtpSessionError && err.kind === 'proxy') break
      }
    }
    if (session === null) {
      const failure = failureOf(host, connectError)
      if (failure.reason === 'proxy_error') {
        byRoute.proxy_errors++
        this.o.on_proxy_error(route.name, (connectError as Error).message)
      }
      return { failure, pushedBack: false, answered }
    }
    byRoute.sessions++
    const inFlight: Item[] = []
    // Recipients asked but not answered go back to the queue. The first of them is charged a
    // try (the session ended at it; the rest of a pipelined window may never have been read):
    // after 3 it keeps the failure.
    // A limit on our client (rate_limited) charges nobody: the MX is slowed down, and the deadline bounds the retries.
    const requeue = (failure: Failure, charge = true): void => {
      const lost = inFlight.splice(0)
      for (let k = lost.length - 1; k >= 0; k--) {
        const item = lost[k]
        if (answers.has(item.address)) continue
        if (k > 0 || !charge || ++item.attempts < 3) queue.unshift(item)
        else answers.set(item.address, failure)
      }
    }
    const refused = (reply: SmtpReply, step: string, charge = true): SessionOutcome => {
      const f: Failure = {
        kind: 'session',
        host,
        reply,
        reason: classifySessionRefusal(reply),
        detail: `${step} refused: ${reply.code} ${reply.message}`.slice(0, 300)
      }
      requeue(f, charge)
      return { failure: f, pushedBack: !charge || isPushBack(f), answered }
    }
    try {
      const banner = await session.read()
      if (banner.code !== 220) return refused(banner, 'banner')
      let hello = await session.hello(route.helo_name)
      if (hello.code !== 250) return refused(hello, 'HELO')
      let clearText: string | undefined
      if (this.o.starttls && session.extensions.has('STARTTLS')) {
        const failedBefore = this.tlsFailed.get(host.host)
        if (failedBefore !== undefined) clearText = `STARTTLS failed: ${failedBefore}`
        else {
          let secured: boolean
          try {
            secured = await session.startTls(host.host)
          } catch (err) {
            const f = failureOf(host, err)
            this.tlsFailed.set(host.host, f.detail.slice(0, 120))
            session.close()
            return { failure: { ...f, detail: `STARTTLS failed: ${f.detail}` }, pushedBack: false, answered, tls_failed: true }
          }
          if (secured) {
            hello = await session.hello(route.helo_name)
            if (hello.code !== 250) return refused(hello, 'EHLO after STARTTLS')
          } else {
            const r = session.tlsRefusal
            clearText = `STARTTLS refused: ${r ? `${r.code}${r.enhanced ? ` ${r.enhanced}` : ''} ${r.message}` : ''}`.slice(0, 120)
          }
        }
      }
      const pipelining = this.o.pipeline_rcpt > 1 && session.extensions.has('PIPELINING')
      let asked = 0
      /** A reply that limits our client (`rate_limited`), once one came in this session. */
      let limited: SmtpReply | null = null
      /** Recipients refused in this session: it ends (and another opens) before the receiver's error limit. */
      let errors = 0
      const budget = Math.max(1, this.o.errors_per_session)
      /** Whether this session may ask more. */
      const room = (): boolean => asked < perSession && errors < budget
      for (;;) {
        while (queue.length > 0 && room()) {
          // UTF-8 mailboxes (RFC 6531): declared on MAIL FROM where the server offers SMTPUTF8
          // (§3.4); where it does not, they cannot be asked in that form (§3.2): said so, not asked.
          const utf8 = session.extensions.has('SMTPUTF8')
          if (!utf8 && queue.some(i => i.eai === true)) {
            for (let k = queue.length - 1; k >= 0; k--) if (queue[k].eai === true) answers.set(queue.splice(k, 1)[0].address, noSmtpUtf8(host))
            if (queue.length === 0) break
          }
          const declared = utf8 && queue.some(i => i.eai === true)
          const mail = await session.command(`MAIL FROM:<${route.mail_from}>${declared ? ' SMTPUTF8' : ''}`)
          if (mail.code !== 250) return refused(mail, 'MAIL FROM')
          this.stats.envelopes++
          let inEnvelope = 0
          let full = false
          while (!full && queue.length > 0 && inEnvelope < this.o.rcpt_per_envelope && room()) {
            // A window of recipients in one write when the server pipelines (RFC 2920), one otherwise;
            // no more than this session's share of what is queued, so that the route's sessions
            // end together (a window of 10 taken last by one of three sessions would leave the
            // others idle while the server answers it, one reply after another).
            const share = Math.ceil(queue.length / Math.max(1, sharers()))
            // Never more in one window than the error budget has left: a window refused whole stays within it.
            const size = Math.min(
              pipelining ? Math.min(this.o.pipeline_rcpt, share) : 1,
              this.o.rcpt_per_envelope - inEnvelope,
              perSession - asked,
              budget - errors
            )
            expireFront(queue, address => answers.set(address, expiredAnswer(host)))
            const due = await takeDue(queue, size)
            const now = Date.now()
            const taken = due.filter(item => {
              if (!isExpired(item, now)) return true
              answers.set(item.address, expiredAnswer(host))
              return false
            })
            // All it took had expired: take again (the loop ends when the queue is empty).
            if (taken.length === 0) continue
            // A UTF-8 mailbox queued after this envelope's MAIL FROM (undeclared) waits for the next one.
            const late = declared ? -1 : taken.findIndex(i => i.eai === true)
            const window = late < 0 ? taken : taken.slice(0, late)
            if (late >= 0) {
              queue.unshift(...taken.slice(late))
              full = true
            }
            if (window.length === 0) break
            inFlight.push(...window)
            session.send(window.map(item => `RCPT TO:<${item.address}>`))
            // Every reply of the window is read (they come in order), whatever they say.
            for (const item of window) {
              const reply = await session.read()
              const answeredAt = Date.now()
              this.stats.rcpts++
              counted.rcpts++
              if (full || limited !== null) continue
              const outcome = classifyRcpt(reply)
              if (outcome === 'rate_limited') {
                // A limit on our client (Postfix's anvil: too many recipients from our address):
                // asking again now only burns the receiver's error budget. This recipient and the
                // rest of the window go back to the queue; the session ends, and the MX is slowed.
                limited = reply
                continue
              }
              if (outcome === 'too_many_recipients' && inEnvelope > 0) {
                // 452 4.5.3: this envelope is full; this recipient and the rest of the window in the next one.
                full = true
                continue
              }
              if (reply.code === 421) return refused(reply, 'RCPT TO')
              if (outcome !== 'accepted') errors++
              inFlight.shift()
              answers.set(item.address, {
                kind: 'rcpt',
                host,
                reply,
                outcome,
                tls: session.tls,
                answered_at: answeredAt,
                ...(clearText === undefined ? {} : { clear_text: clearText })
              })
              answered++
              inEnvelope++
              asked++
            }
            if (limited !== null) return { ...refused(limited, 'RCPT TO', false), rate_limited: connectedTo }
            // Recipients the full envelope turned away go back to the front of the queue, in order.
            if (full) queue.unshift(...inFlight.splice(0))
          }
          if (queue.length > 0 && room()) {
            const rset = await session.command('RSET')
            if (rset.code !== 250) return refused(rset, 'RSET')
          }
        }
        // The queue ran dry: linger for recipients other callers add to this route (the
        // transaction ended without DATA, so RSET before the next MAIL FROM).
        if (!room() || more === undefined || this.o.linger_ms <= 0 || !(await more(this.o.linger_ms))) break
        const rset = await session.command('RSET')
        if (rset.code !== 250) return refused(rset, 'RSET')
      }
      return { failure: null, pushedBack: false, answered }
    } catch (err) {
      session.close()
      const f = failureOf(host, err)
      requeue(f)
      return { failure: f, pushedBack: false, answered }
    } finally {
      // However the session ends, this side ends it: QUIT (RFC 5321 §4.1.1.10; a server that
      // refused the greeting with 554 waits for it, §3.1), then the close; a session already
      // over (a lost connection, a failed handshake, an error above) is only closed. Left
      // open after a refusal, it held the receiver's session count until its idle timeout.
      await session.quit()
    }
  }
}

/**
 * The answer for a UTF-8 mailbox at a server that does not offer SMTPUTF8: it cannot be
 * asked in the form it was given (RFC 6531 §3.2: no downgrade of the local part), so nothing
 * is learned about it (unknown), never `invalid` for the server's `501` to an undeclared one.
 */
function noSmtpUtf8(host: MailHost): Failure {
  return {
    kind: 'session',
    host,
    reply: null,
    reason: 'smtp_unavailable',
    detail: `${host.host} does not offer SMTPUTF8 (RFC 6531): a mailbox with a UTF-8 local part cannot be asked there`
  }
}

/**
 * Takes up to `room` recipients from `queue` that are due (`due` absent or passed), in
 * queue order; when some are queued but none is due, waits in the open session until the
 * earliest is (a greylisted recipient asked again once its window has passed, so that
 * the session is open by then: no banner and EHLO on the round's critical path). Empty
 * when the queue ran dry meanwhile (another session took what was left). Cost: the due
 * run at the front of the queue is taken in one splice, as without due times; the whole
 * queue is looked at only when its head is not due yet.
 */
async function takeDue(queue: Item[], room: number): Promise<Item[]> {
  for (;;) {
    const now = Date.now()
    let run = 0
    while (run < room && run < queue.length && (queue[run].due ?? 0) <= now) run++
    if (run > 0 || queue.length === 0) return queue.splice(0, run)
    // The head waits for its window: due ones behind it (another caller's) go first.
    const taken: Item[] = []
    let next = Number.POSITIVE_INFINITY
    for (let k = 0; k < queue.length && taken.length < room; ) {
      const due = queue[k].due ?? 0
      if (due <= now) taken.push(...queue.splice(k, 1))
      else {
        next = Math.min(next, due)
        k++
      }
    }
    if (taken.length > 0) return taken
    await new Promise(resolve => setTimeout(resolve, Math.max(1, next - now)))
  }
}
