// One SMTP host of the mail world: a small raw server on `ip:<port>` that says on the wire
// exactly what its spec scripts (multi-line replies, 2xx texts, enhanced codes, failing
// STARTTLS, hang-ups), and logs every connection with the command lines it received.
import { StringDecoder } from 'node:string_decoder'
import { createServer, type Socket } from 'node:net'
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { TtlSpec } from './mail-world-dns.ts'

/** An SMTP reply; a `string[]` message is a multi-line reply (`550-…` … `550 …`, RFC 5321 §4.2.1). */
export interface Reply {
  code: number
  message: string | string[]
}

type DropPoint = 'connect' | 'banner' | 'EHLO' | 'STARTTLS' | 'MAIL' | 'RCPT'

export interface HostSpec {
  name: string
  /** Where the host listens (on the world's SMTP port) and what its name's A record (AAAA for an IPv6 address) says. */
  ip: string
  /** Delay before the banner (ms); past the client's timeout this is a tarpit. */
  banner_delay_ms?: number
  /** With `banner_delay_ms`: only the first N sessions wait for their banner (default all). */
  banner_delay_sessions?: number
  /** The greeting: a refusal instead of 220 (e.g. 421 busy, 554 blocked; the host hangs up after it), or a 220 as given. */
  banner_reply?: Reply
  /** Reply to RCPT TO for an address (lower-cased); default 250. */
  rcpt?: (address: string) => Reply
  /** Nothing listens on the address: connections are refused. */
  refuse?: boolean
  /** Accept the TCP connection and never say anything. */
  silent?: boolean
  /** Offer STARTTLS (a self-signed certificate for localhost). */
  starttls?: boolean
  /** Recipients per envelope; beyond it RCPT gets 452 4.5.3. */
  max_rcpt_per_envelope?: number
  /** Concurrent sessions; beyond it the banner is 421 4.7.0. */
  max_sessions?: number
  /**
   * Postfix's error limits: each 4xx/5xx reply counts an error of the session; past `soft`
   * (smtpd_soft_error_limit) every reply waits `sleep_ms` (smtpd_error_sleep_time), and at
   * `hard` (smtpd_hard_error_limit) the server says `421 4.7.0 Error: too many errors` and
   * hangs up. The session's count is in its ConnectionLog (`errors`, `cut_for_errors`).
   */
  error_limits?: { soft: number; hard: number; sleep_ms: number }
  /**
   * The reply to QUIT waits this long (ms), and the session counts against `max_sessions`
   * until it has gone out, whether the client waited or closed: as a Postfix process that
   * sleeps off its errors (`smtpd_error_sleep_time`) holds its client's slot.
   */
  quit_delay_ms?: number
  /** Greylisting: an address is answered 450 4.2.0 until this long (ms) after it was first asked. */
  greylist_ms?: number
  /** Delay before each RCPT reply (ms). */
  rcpt_delay_ms?: number
  /**
   * A gate the test holds: the RCPT reply for an address waits until the promise this gives
   * settles (undefined: no wait), so a test orders what it observes by what it releases,
   * never by a clock.
   */
  rcpt_hold?: (address: string) => Promise<void> | undefined
  /** 2xx replies to RCPT go out as `rcpt` words them; by default every accepted RCPT reads `250 Accepted` (as smtp-server said). */
  verbatim?: boolean
  /**
   * The reply to EHLO as given: the first line greets, the others name extensions. Another
   * code than 250 refuses EHLO (the client must say HELO). Default: a greeting, PIPELINING,
   * 8BITMIME, SMTPUTF8, then ENHANCEDSTATUSCODES and STARTTLS as the flags say.
   */
  ehlo?: Reply
  /** The reply to MAIL FROM as given (default `250 Accepted`); not 2xx refuses the envelope. */
  mail?: Reply
  /** Advertise ENHANCEDSTATUSCODES (RFC 2034); the host's own replies then carry codes (`250 2.1.5 Accepted`). Scripted texts go out as given. */
  enhanced_status_codes?: boolean
  /**
   * STARTTLS offered but failing (implies `starttls`): `refuse` answers 454 (RFC 3207 §4);
   * `handshake` answers 220, then a fatal TLS alert to the ClientHello and hangs up;
   * `stall` answers 220 and never speaks TLS.
   */
  starttls_failure?: 'refuse' | 'handshake' | 'stall'
  /**
   * Hang up: on `connect` (before any banner), after the `banner`, or when the command
   * arrives (before its reply; `after_reply`: once answered). `sessions`: only in the first
   * N sessions (default all). `reset`: a TCP RST instead of a FIN.
   */
  drop?: { at: DropPoint; after_reply?: boolean; sessions?: number; reset?: boolean }
  /** Pause between the lines of a multi-line reply (ms), so each arrives in a segment of its own. */
  line_delay_ms?: number
  /** DNS: more AAAA records for the name. */
  aaaa?: string[]
  /** DNS: whether `ip` is published for the name (default true). */
  publish_ip?: boolean
  /** DNS: TTLs of the name's records (default 300 s). */
  ttl?: TtlSpec
}

/** One TCP connection a host accepted. */
export interface ConnectionLog {
  /** The host address it arrived on. */
  ip: string
  /** Epoch ms. */
  at: number
  /** Every command line received, in order (nothing for a connection that never spoke). */
  commands: string[]
  /** Command lines that arrived while an earlier one was still unanswered (pipelined, RFC 2920). */
  pipelined: number
  /** The session switched to TLS. */
  tls: boolean
  /** Who ended it (`client`: QUIT or the client's FIN); null while open. */
  closed_by: 'client' | 'server' | null
  /** 4xx and 5xx replies the host gave in it (counted where `error_limits` is set). */
  errors?: number
  /** The host hung up on it for too many errors (`error_limits.hard`). */
  cut_for_errors?: boolean
}

export interface SmtpLogs {
  transcript: string[]
  connections: Map<string, number>
  tls_sessions: Map<string, number>
  peak_sessions: Map<string, number>
  connection_log: ConnectionLog[]
}

interface HostState {
  active: number
  sessions: number
  firstSeen: Map<string, number>
  sockets: Set<Socket>
}

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
const require = createRequire(import.meta.url)
let context: SecureContext | null = null

/** smtp-server's self-signed certificate for localhost (its package exports hide the file; its path does not). */
function tlsContext(): SecureContext {
  if (!context) {
    const options = require(join(dirname(require.resolve('smtp-server')), 'tls-options.js')) as () => { key: string; cert: string }
    context = createSecureContext({ key: options().key, cert: options().cert })
  }
  return context
}

// A fatal handshake_failure alert (TLS record type 21, RFC 5246 §7.2).
const TLS_ALERT = Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28])

function serveConnection(socket: Socket, h: HostSpec, state: HostState, logs: SmtpLogs): void {
  const ip = h.ip
  const entry: ConnectionLog = { ip, at: Date.now(), commands: [], pipelined: 0, tls: false, closed_by: null }
  logs.connection_log.push(entry)
  logs.connections.set(ip, (logs.connections.get(ip) ?? 0) + 1)
  state.active++
  logs.peak_sessions.set(ip, Math.max(logs.peak_sessions.get(ip) ?? 0, state.active))
  const sessionNo = ++state.sessions
  const remote = socket.remoteAddress ?? '?'
  socket.on('error', () => {})
  socket.on('end', () => {
    entry.closed_by ??= 'client'
  })
  /** A QUIT being answered (`quit_delay_ms`): the session counts until it is. */
  let quitting: Promise<void> | null = null
  socket.on('close', () => {
    entry.closed_by ??= 'client'
    state.sockets.delete(socket)
    if (quitting) void quitting.then(() => state.active--)
    else state.active--
  })
  socket.setTimeout(30_000, () => {
    void send(421, ec('4.4.2', 'Timeout - closing connection')).then(hangUp)
  })

  let io: Socket | TLSSocket = socket
  let ended = false
  let buffer = ''
  let decoder = new StringDecoder('utf8')
  const queue: string[] = []
  let busy = false
  const env = { helo: false, mail: false, rcpts: 0, data: false }
  const offersTls = (): boolean => (h.starttls === true || h.starttls_failure !== undefined) && !entry.tls
  const ec = (code: string, text: string): string => (h.enhanced_status_codes ? `${code} ${text}` : text)
  const drops = (at: DropPoint): boolean => h.drop?.at === at && (h.drop.sessions === undefined || sessionNo <= h.drop.sessions)

  function hangUp(): void {
    if (ended) return
    ended = true
    entry.closed_by ??= 'server'
    if (h.drop?.reset) {
      socket.resetAndDestroy()
      return
    }
    io.end()
    setTimeout(() => socket.destroy(), 200).unref()
  }

  async function send(code: number, message: string | string[]): Promise<void> {
    const limits = h.error_limits
    if (limits && code >= 400 && code !== 421) {
      entry.errors = (entry.errors ?? 0) + 1
      if (entry.errors >= limits.hard) {
        entry.cut_for_errors = true
        entry.closed_by ??= 'server'
        if (!ended && !io.destroyed) io.write(`421 ${ec('4.7.0', 'Error: too many errors').trimStart()}\r\n`)
        return hangUp()
      }
    }
    // Past the soft limit, every reply waits (Postfix's smtpd_error_sleep_time).
    if (limits && (entry.errors ?? 0) > limits.soft) await sleep(limits.sleep_ms)
    const lines = typeof message === 'string' ? [message] : message
    const wire = lines.map((l, i) => `${`${code}${i < lines.length - 1 ? '-' : ' '}${l}`.trimEnd()}\r\n`)
    if (h.line_delay_ms && wire.length > 1) {
      for (const [i, w] of wire.entries()) {
        if (ended || io.destroyed) return
        io.write(w)
        if (i < wire.length - 1) await sleep(h.line_delay_ms)
      }
    } else if (!ended && !io.destroyed) io.write(wire.join(''))
  }

  function onData(chunk: Buffer): void {
    // UTF-8, as an SMTPUTF8 server reads the envelope (RFC 6531 §3.2); a character split between two chunks is kept whole.
    buffer += decoder.write(chunk)
    let nl: number
    while ((nl = buffer.indexOf('\n')) >= 0) {
      if (busy || queue.length > 0) entry.pipelined++
      queue.push(buffer.slice(0, nl).replace(/\r$/, ''))
      buffer = buffer.slice(nl + 1)
    }
    void pump()
  }

  async function pump(): Promise<void> {
    if (busy) return
    busy = true
    try {
      while (queue.length > 0 && !ended) await handle(queue.shift()!)
    } finally {
      busy = false
    }
  }

  /** STARTTLS accepted: what follows on the wire is TLS, or (failures) an alert or silence. */
  function upgrade(): void {
    socket.removeListener('data', onData)
    queue.length = 0
    buffer = ''
    decoder = new StringDecoder('utf8')
    if (h.starttls_failure === 'handshake') {
      socket.once('data', () => {
        socket.write(TLS_ALERT)
        hangUp()
      })
      return
    }
    if (h.starttls_failure === 'stall') return
    const secure = new TLSSocket(socket, { isServer: true, secureContext: tlsContext() })
    secure.on('error', () => {})
    secure.on('secure', () => {
      entry.tls = true
      logs.tls_sessions.set(ip, (logs.tls_sessions.get(ip) ?? 0) + 1)
    })
    secure.on('data', onData)
    io = secure
    env.helo = false
    env.mail = false
  }

  const address = (line: string): string | null => /^(?:MAIL FROM|RCPT TO):\s*<([^>]*)>/i.exec(line)?.[1] ?? null

  async function rcpt(line: string): Promise<void> {
    if (!env.mail) return await send(503, ec('5.5.1', 'Error: need MAIL command'))
    const to = address(line)
    if (to === null) return await send(501, ec('5.1.3', 'Error: Bad recipient address syntax'))
    logs.transcript.push(`${ip} RCPT TO:<${to}>`)
    if (h.max_rcpt_per_envelope !== undefined && env.rcpts >= h.max_rcpt_per_envelope) return await send(452, '4.5.3 Too many recipients')
    const who = to.toLowerCase()
    if (h.greylist_ms !== undefined) {
      const seen = state.firstSeen.get(who)
      if (seen === undefined) state.firstSeen.set(who, Date.now())
      if (seen === undefined || Date.now() - seen < h.greylist_ms) return await send(450, '4.2.0 Greylisted, please try again later')
    }
    const r = h.rcpt ? h.rcpt(who) : { code: 250, message: '2.1.5 OK' }
    if (h.rcpt_delay_ms) await sleep(h.rcpt_delay_ms)
    await h.rcpt_hold?.(who)
    if (r.code < 200 || r.code >= 300) return await send(r.code, r.message)
    env.rcpts++
    await send(r.code, h.verbatim ? r.message : ec('2.1.5', 'Accepted'))
  }

  async function command(verb: string, line: string): Promise<void> {
    switch (verb) {
      case 'EHLO': {
        env.helo = false
        env.mail = false
        if (h.ehlo && h.ehlo.code !== 250) return await send(h.ehlo.code, h.ehlo.message)
        env.helo = true
        const given = h.ehlo ? (typeof h.ehlo.message === 'string' ? [h.ehlo.message] : h.ehlo.message) : null
        const lines = given
          ? given.filter(l => offersTls() || l.toUpperCase() !== 'STARTTLS')
          : [
              `${h.name} Nice to meet you, [${remote}]`,
              'PIPELINING',
              '8BITMIME',
              'SMTPUTF8',
              ...(h.enhanced_status_codes ? ['ENHANCEDSTATUSCODES'] : []),
              ...(offersTls() ? ['STARTTLS'] : [])
            ]
        return await send(250, lines)
      }
      case 'HELO':
        env.helo = true
        env.mail = false
        return await send(250, `${h.name} Nice to meet you, [${remote}]`)
      case 'STARTTLS':
        if (!offersTls()) return await send(502, ec('5.5.1', 'Error: command not implemented'))
        if (h.starttls_failure === 'refuse') return await send(454, ec('4.7.0', 'TLS not available due to local problem'))
        await send(220, ec('2.0.0', 'Ready to start TLS'))
        return upgrade()
      case 'MAIL': {
        if (!env.helo) return await send(503, ec('5.5.1', 'Error: send HELO/EHLO first'))
        if (env.mail) return await send(503, ec('5.5.1', 'Error: nested MAIL command'))
        const from = address(line)
        if (from === null) return await send(501, ec('5.1.7', 'Error: Bad sender address syntax'))
        logs.transcript.push(`${ip} MAIL FROM:<${from}>`)
        if (h.mail && (h.mail.code < 200 || h.mail.code >= 300)) return await send(h.mail.code, h.mail.message)
        env.mail = true
        env.rcpts = 0
        return await send(250, h.mail?.message ?? ec('2.1.0', 'Accepted'))
      }
      case 'RCPT':
        return await rcpt(line)
      case 'RSET':
        env.mail = false
        return await send(250, ec('2.0.0', 'Flushed'))
      case 'NOOP':
        return await send(250, ec('2.0.0', 'OK'))
      case 'VRFY':
        return await send(252, ec('2.5.2', 'Try to send something. No promises though'))
      case 'DATA':
        logs.transcript.push(`${ip} DATA`)
        if (!env.mail || env.rcpts === 0) return await send(503, ec('5.5.1', 'Error: need RCPT command'))
        env.data = true
        return await send(354, 'End data with <CR><LF>.<CR><LF>')
      case 'QUIT':
        entry.closed_by ??= 'client'
        if (h.quit_delay_ms) {
          quitting = sleep(h.quit_delay_ms)
          await quitting
        }
        await send(221, ec('2.0.0', 'Bye'))
        return hangUp()
      default:
        return await send(500, ec('5.5.2', 'Error: command not recognized'))
    }
  }

  async function handle(line: string): Promise<void> {
    if (env.data) {
      if (line === '.') {
        env.data = false
        env.mail = false
        await send(250, ec('2.0.0', 'OK: message queued'))
      }
      return
    }
    entry.commands.push(line)
    const verb = line.split(/[ :]/)[0].toUpperCase()
    const drop = drops(verb as DropPoint)
    if (drop && !h.drop!.after_reply) return hangUp()
    await command(verb, line)
    if (drop) hangUp()
  }

  void (async () => {
    if (drops('connect')) return hangUp()
    if (h.silent) return
    if (h.banner_delay_ms && (h.banner_delay_sessions === undefined || sessionNo <= h.banner_delay_sessions)) await sleep(h.banner_delay_ms)
    if (ended || socket.destroyed) return
    const refusal =
      h.banner_reply && h.banner_reply.code !== 220
        ? h.banner_reply
        : h.max_sessions !== undefined && state.active > h.max_sessions
          ? { code: 421, message: '4.7.0 Too many concurrent sessions, try later' }
          : null
    if (refusal) {
      await send(refusal.code, refusal.message)
      return hangUp()
    }
    await send(220, h.banner_reply?.message ?? `${h.name} ESMTP simulated`)
    if (drops('banner')) return hangUp()
    socket.on('data', onData)
  })()
}

/** Starts the host's server on `h.ip:port`; resolves with its close function. */
export async function serveSmtpHost(h: HostSpec, port: number, logs: SmtpLogs): Promise<() => Promise<void>> {
  const state: HostState = { active: 0, sessions: 0, firstSeen: new Map(), sockets: new Set() }
  logs.connections.set(h.ip, logs.connections.get(h.ip) ?? 0)
  const server = createServer(socket => {
    state.sockets.add(socket)
    serveConnection(socket, h, state, logs)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, h.ip, () => resolve())
  })
  return async () => {
    for (const s of state.sockets) s.destroy()
    await new Promise(resolve => server.close(resolve))
  }
}
