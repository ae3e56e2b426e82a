import type { MailHost, MailResolver } from './dns.ts'
import { SmtpSession, SmtpSessionError, type SmtpReply } from './smtp-client.ts'
import { classifyRcpt, classifySessionRefusal, type RcptOutcome } from './classify.ts'

export interface ProbeOptions {
  port: number
  helo_name: string
  mail_from: string
  /** Bound on connect, banner and every command (ms). */
  timeout_ms: number
  /** MX hosts tried before giving up (in preference order). */
  max_hosts?: number
}

/** The answer for one recipient of a probe. */
export type RecipientAnswer =
  | { kind: 'rcpt', host: MailHost, reply: SmtpReply, outcome: RcptOutcome }
  | { kind: 'session', host: MailHost | null, reply: SmtpReply | null, reason: 'no_connect' | 'timeout' | 'smtp_unavailable' | 'ip_blocked' | 'unexpected_error', detail: string }

type SessionFailure = Extract<RecipientAnswer, { kind: 'session' }>

function sessionFailure (host: MailHost, err: unknown): SessionFailure {
  if (err instanceof SmtpSessionError) {
    const reason = err.kind === 'no_connect' ? 'no_connect' : err.kind === 'timeout' ? 'timeout' : 'smtp_unavailable'
    return { kind: 'session', host, reply: null, reason, detail: err.message }
  }
  return { kind: 'session', host, reply: null, reason: 'unexpected_error', detail: String(err) }
}

/**
 * Opens a session with one MX address and asks `RCPT TO` for each recipient in one
 * envelope (RFC 5321 §3.3): banner, EHLO (HELO if refused), MAIL FROM, RCPT TO …, QUIT.
 * Never DATA. Returns one answer per recipient, or a session failure for all of them.
 */
async function probeOne (ip: string, host: MailHost, recipients: readonly string[], o: ProbeOptions): Promise<RecipientAnswer[]> {
  let session: SmtpSession
  try {
    session = await SmtpSession.connect(ip, o.port, o.timeout_ms)
  } catch (err) {
    return recipients.map(() => sessionFailure(host, err))
  }
  try {
    const refused = (reply: SmtpReply, step: string): RecipientAnswer[] =>
      recipients.map(() => ({ kind: 'session' as const, host, reply, reason: classifySessionRefusal(reply), detail: `${step} refused: ${reply.code} ${reply.message}`.slice(0, 300) }))
    const banner = await session.read()
    if (banner.code !== 220) return refused(banner, 'banner')
    let hello = await session.command(`EHLO ${o.helo_name}`)
    if (hello.code !== 250) hello = await session.command(`HELO ${o.helo_name}`)
    if (hello.code !== 250) return refused(hello, 'HELO')
    const mail = await session.command(`MAIL FROM:<${o.mail_from}>`)
    if (mail.code !== 250) return refused(mail, 'MAIL FROM')
    const answers: RecipientAnswer[] = []
    for (const rcpt of recipients) {
      const reply = await session.command(`RCPT TO:<${rcpt}>`)
      answers.push({ kind: 'rcpt', host, reply, outcome: classifyRcpt(reply) })
    }
    await session.quit()
    return answers
  } catch (err) {
    session.close()
    return recipients.map(() => sessionFailure(host, err))
  }
}

/**
 * Probes recipients of one domain against its mail hosts in preference order (RFC 5321
 * §5.1): a host whose addresses cannot be reached, or which refuses the session, passes
 * the turn to the next one, up to `max_hosts` hosts (2 by default) so that a dead domain
 * costs bounded time. Each recipient gets the answer of the first host that gave one.
 */
export async function probeRecipients (resolver: MailResolver, hosts: readonly MailHost[], recipients: readonly string[], o: ProbeOptions): Promise<RecipientAnswer[]> {
  let last: RecipientAnswer[] = recipients.map(() => ({ kind: 'session', host: null, reply: null, reason: 'no_connect', detail: 'no mail host address' }))
  for (const host of hosts.slice(0, o.max_hosts ?? 2)) {
    const ips = await resolver.addresses(host.host)
    if (ips.length === 0) {
      last = recipients.map(() => ({ kind: 'session', host, reply: null, reason: 'no_connect', detail: `${host.host} has no address` }))
      continue
    }
    const answers = await probeOne(ips[0], host, recipients, o)
    if (answers.every(a => a.kind === 'rcpt')) return answers
    last = answers
  }
  return last
}
