import type { Socket } from 'node:net'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import { once } from 'node:events'
import { EgressError, openConnection, type EgressRoute } from './egress.ts'

/** One SMTP reply (RFC 5321 §4.2) with its enhanced status code (RFC 3463) when present. */
export interface SmtpReply {
  code: number
  /** `class.subject.detail`, e.g. `5.1.1`, or null. */
  enhanced: string | null
  /** Reply text, lines joined with a space, without codes. */
  message: string
}

/** Why a session could not go on (`proxy`: the egress route's proxy failed before the server was reached). */
export class SmtpSessionError extends Error {
  readonly kind: 'no_connect' | 'timeout' | 'closed' | 'proxy'
  constructor(kind: 'no_connect' | 'timeout' | 'closed' | 'proxy', message: string) {
    super(message)
    this.name = 'SmtpSessionError'
    this.kind = kind
  }
}

/** What a session closed by this side is over with (frozen: shared by every such session, none made per close; its stack is where it was made). */
const CLOSED_BY_CLIENT = Object.freeze(new SmtpSessionError('closed', 'closed by client'))

const ENHANCED = /^([245])\.(\d{1,3})\.(\d{1,3})\b/
const MAX_REPLY_BYTES = 64 * 1024

/** Replies read after QUIT before its 221 at most: those of a pipelined window cut short (the probe's windows are smaller). */
const QUIT_MAX_REPLIES = 64

/**
 * One reply from its lines as they came (`550-…` … `550 …`, RFC 5321 §4.2.1), without
 * line ends: the basic code of the last line, the enhanced code (RFC 3463 §2) when the
 * first line's text starts with one of the same class, and the texts joined with a space,
 * each line's leading enhanced code taken off.
 */
export function parseReply(lines: readonly string[]): SmtpReply {
  const code = Number(lines[lines.length - 1].slice(0, 3))
  const texts = lines.map(l => l.slice(4))
  const m = ENHANCED.exec(texts[0])
  const enhanced = m && m[1] === String(code)[0] ? `${m[1]}.${m[2]}.${m[3]}` : null
  const message = texts
    .map(t => (enhanced && t.startsWith(enhanced) ? t.slice(enhanced.length).trim() : t.trim()))
    .join(' ')
    .trim()
  return { code, enhanced, message }
}

/**
 * A minimal SMTP client session for probing (never sends DATA): connect, read replies,
 * send commands, each bounded by `timeout_ms`. Multi-line replies (`250-…` … `250 …`)
 * are joined. A reply larger than 64 KiB ends the session (`closed`).
 */
export class SmtpSession {
  private socket: Socket | TLSSocket
  private buffer = ''
  private lines: string[] = []
  private waiting: { resolve: (r: SmtpReply) => void; reject: (e: Error) => void } | null = null
  private ended: SmtpSessionError | null = null
  private readonly replies: SmtpReply[] = []
  private readonly timeoutMs: number

  private constructor(socket: Socket, timeoutMs: number) {
    this.socket = socket
    this.timeoutMs = timeoutMs
    this.attach(socket)
  }

  /** Whether the session runs over TLS (after STARTTLS). */
  tls = false
  /** The server's refusal of STARTTLS (e.g. 454 4.7.0, RFC 3207 §4), when it refused. */
  tlsRefusal: SmtpReply | null = null
  /** Extensions announced in the last EHLO reply, upper-cased keywords (RFC 5321 §4.1.1.1). */
  extensions = new Set<string>()

  private attach(socket: Socket | TLSSocket): void {
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      this.onData(chunk)
    })
    socket.on('error', err => {
      this.fail(new SmtpSessionError('closed', err.message))
    })
    // A session already over (QUIT, or closed by this side) makes no second error: its stack costs.
    socket.on('close', () => {
      if (!this.ended) this.fail(new SmtpSessionError('closed', 'connection closed by server'))
    })
  }

  /**
   * EHLO; records the announced extensions. Falls back to HELO when EHLO is refused.
   * @returns the reply (250 when the greeting was accepted).
   */
  async hello(name: string): Promise<SmtpReply> {
    const reply = await this.command(`EHLO ${name}`)
    if (reply.code === 250) {
      this.extensions = new Set(this.lastLines.slice(1).map(l => l.split(' ')[0].toUpperCase()))
      return reply
    }
    this.extensions = new Set()
    return await this.command(`HELO ${name}`)
  }

  /**
   * STARTTLS (RFC 3207) and the TLS handshake, bounded by the timeout. Certificates are
   * not validated: a probe sends no message, and receivers commonly present self-signed
   * or mismatched certificates. The caller must say EHLO again afterwards.
   * @returns false when the server refused STARTTLS (the session goes on in clear text; the reply is in `tlsRefusal`).
   * @throws SmtpSessionError when the handshake fails or times out (the session is over).
   */
  async startTls(servername: string): Promise<boolean> {
    const reply = await this.command('STARTTLS')
    if (reply.code !== 220) {
      this.tlsRefusal = reply
      return false
    }
    const plain = this.socket
    plain.removeAllListeners('data')
    plain.removeAllListeners('error')
    plain.removeAllListeners('close')
    const secure = tlsConnect({ socket: plain, servername: /^[\d.]+$|:/.test(servername) ? undefined : servername, rejectUnauthorized: false })
    try {
      // Rejects with the socket's 'error', or an AbortError once the timeout's signal fires.
      await once(secure, 'secureConnect', { signal: AbortSignal.timeout(this.timeoutMs) })
    } catch (err) {
      secure.destroy()
      const failure =
        (err as Error).name === 'AbortError'
          ? new SmtpSessionError('timeout', `TLS handshake timed out after ${this.timeoutMs} ms`)
          : new SmtpSessionError('closed', `TLS: ${(err as Error).message}`)
      this.fail(failure)
      plain.destroy()
      throw failure
    }
    this.socket = secure
    this.tls = true
    this.attach(secure)
    return true
  }

  private lastLines: string[] = []

  /**
   * Opens a TCP connection to `ip:port` within `timeout_ms`, directly or through the
   * route's SOCKS5 proxy (see `openConnection`).
   * @throws SmtpSessionError `no_connect` (refused, unreachable), `timeout`, or `proxy` (the
   *   proxy failed: never the server's answer).
   */
  static async connect(ip: string, port: number, timeoutMs: number, route: Pick<EgressRoute, 'proxy'> = { proxy: null }): Promise<SmtpSession> {
    try {
      return new SmtpSession(await openConnection(route, ip, port, timeoutMs), timeoutMs)
    } catch (err) {
      if (err instanceof EgressError) throw new SmtpSessionError(err.kind, err.message)
      throw err
    }
  }

  private onData(chunk: string): void {
    this.buffer += chunk
    if (this.buffer.length > MAX_REPLY_BYTES) {
      this.fail(new SmtpSessionError('closed', 'reply too long'))
      this.socket.destroy()
      return
    }
    let nl: number
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '')
      this.buffer = this.buffer.slice(nl + 1)
      this.lines.push(line)
      if (/^\d{3}(?: |$)/.test(line)) this.completeReply()
      else if (!/^\d{3}-/.test(line)) {
        this.fail(new SmtpSessionError('closed', `malformed reply line: ${line.slice(0, 80)}`))
        this.socket.destroy()
        return
      }
    }
  }

  private completeReply(): void {
    const lines = this.lines
    this.lines = []
    this.lastLines = lines.map(l => l.slice(4))
    const reply = parseReply(lines)
    if (this.waiting) {
      const w = this.waiting
      this.waiting = null
      w.resolve(reply)
    } else {
      this.replies.push(reply)
    }
  }

  private fail(err: SmtpSessionError): void {
    if (this.ended) return
    this.ended = err
    if (this.timer) {
      clearTimeout(this.timer)
      this.timer = null
    }
    if (this.waiting) {
      const w = this.waiting
      this.waiting = null
      w.reject(err)
    }
  }

  /**
   * The next reply (the banner right after connecting).
   * @throws SmtpSessionError `timeout` after `timeout_ms`, `closed` when the server hung up.
   */
  async read(): Promise<SmtpReply> {
    const queued = this.replies.shift()
    if (queued) return queued
    if (this.ended) throw this.ended
    return await new Promise<SmtpReply>((resolve, reject) => {
      // One timer per session, re-armed for each reply (cheaper than a timer per command).
      if (this.timer) this.timer.refresh()
      else {
        this.timer = setTimeout(() => {
          const w = this.waiting
          if (!w) return
          this.waiting = null
          const err = new SmtpSessionError('timeout', `no reply within ${this.timeoutMs} ms`)
          this.fail(err)
          this.socket.destroy()
          w.reject(err)
        }, this.timeoutMs)
      }
      this.waiting = { resolve, reject }
    })
  }

  private timer: NodeJS.Timeout | null = null

  /** Sends one command line (CRLF added) and reads its reply. */
  async command(line: string): Promise<SmtpReply> {
    this.send([line])
    return await this.read()
  }

  /**
   * Sends command lines in one write (RFC 2920 pipelining, when the server announced
   * PIPELINING); the caller reads one reply per line, in order, with `read`.
   * @throws Error for a line with a line break; SmtpSessionError when the session is over.
   */
  send(lines: readonly string[]): void {
    if (lines.some(line => /[\r\n]/.test(line))) throw new Error('command contains a line break')
    if (this.ended) throw this.ended
    this.socket.write(lines.map(line => `${line}\r\n`).join(''))
  }

  /**
   * Sends QUIT and waits for its `221` (RFC 5321 §4.1.1.10: the server replies, then closes)
   * or for the server to close, each read bounded by `timeout_ms`, then closes. Replies still
   * owed (a pipelined window cut short) are read and passed over first. Waiting matters: a
   * receiver counts the session until it has handled the QUIT, and a slot given back before
   * that met its session limit (Postfix logged the next connection over its limit of 1).
   */
  async quit(): Promise<void> {
    if (!this.ended) {
      this.socket.write('QUIT\r\n')
      // At most as many replies as could be owed, then the 221; a timeout or the close ends it.
      for (let n = 0; n < QUIT_MAX_REPLIES; n++) {
        const reply = await this.read().catch(() => null)
        if (reply === null || reply.code === 221) break
      }
    }
    this.close()
  }

  /** Ends the session at once (no QUIT): it is over with CLOSED_BY_CLIENT, a read awaited rejects with it. */
  close(): void {
    this.fail(CLOSED_BY_CLIENT)
    this.socket.destroy()
  }
}
