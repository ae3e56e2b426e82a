// What a probe learns about one recipient: the server's RCPT reply, or why the session
// could not ask (and whether the receiver pushed back).
import type { MailHost } from './dns.ts'
import { SmtpSessionError, type SmtpReply } from './smtp-client.ts'
import type { RcptOutcome } from './classify.ts'

type SessionFailureReason = 'no_connect' | 'timeout' | 'smtp_unavailable' | 'ip_blocked' | 'unexpected_error' | 'proxy_error'

/** The answer for one recipient. */
export type RecipientAnswer =
  /**
   * `answered_at`: when the server's reply to RCPT TO came (epoch ms; the server had the
   * command by then: a greylisting window counted from it has passed on the server too).
   * `clear_text`: why the session ran without TLS although the server offered STARTTLS (its
   * refusal, or a handshake that failed).
   */
  | { kind: 'rcpt'; host: MailHost; reply: SmtpReply; outcome: RcptOutcome; tls: boolean; answered_at: number; clear_text?: string }
  /**
   * `expired`: not asked, the caller's `until` had passed (a greylisting deadline): the
   * recipient's last answer stands.
   */
  | { kind: 'session'; host: MailHost | null; reply: SmtpReply | null; reason: SessionFailureReason; detail: string; expired?: true }

/** A session-level answer: no RCPT reply for the recipient. */
export type Failure = Extract<RecipientAnswer, { kind: 'session' }>

/**
 * What a customer reads of a proxy failure: the reason in words, never the proxy's address
 * nor its reply (operators' infrastructure; the operator has them in the log, `/readyz`
 * with the metrics token, `/metrics` and `svc doctor`).
 */
const PROXY_FAILED = 'our way out to the mail server failed before it was reached; nothing was learned about the address'

/**
 * A session failure from what a session threw (SmtpSessionError kinds; anything else
 * unexpected). Its `detail` is shown to the customer in the job's `smtp` check: a proxy's
 * failure is `PROXY_FAILED`, whatever the proxy said.
 */
export function failureOf(host: MailHost | null, err: unknown): Failure {
  if (err instanceof SmtpSessionError) {
    if (err.kind === 'proxy') return { kind: 'session', host, reply: null, reason: 'proxy_error', detail: PROXY_FAILED }
    const reason = err.kind === 'no_connect' ? 'no_connect' : err.kind === 'timeout' ? 'timeout' : 'smtp_unavailable'
    return { kind: 'session', host, reply: null, reason, detail: err.message }
  }
  return { kind: 'session', host, reply: null, reason: 'unexpected_error', detail: String(err) }
}

/** Pushed back by the receiver (421, 4.7.x): try again later rather than answer. */
export const isPushBack = (f: Failure): boolean => f.reply !== null && (f.reply.code === 421 || (f.reply.enhanced?.startsWith('4.7.') ?? false))

/** The answer of a recipient not asked again: its `until` passed before a session could (or `detail`). */
export const expiredAnswer = (host: MailHost | null, detail = 'the greylisting deadline passed before it could be asked again'): Failure => ({
  kind: 'session',
  host,
  reply: null,
  reason: 'timeout',
  detail,
  expired: true
})
