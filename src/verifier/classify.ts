import type { SmtpReply } from './smtp-client.ts'

/** What a reply to `RCPT TO` says about the mailbox. */
export type RcptOutcome =
  | 'accepted' | 'mailbox_not_found' | 'mailbox_disabled' | 'rejected_email'
  | 'mailbox_full' | 'greylisted' | 'too_many_recipients' | 'smtp_unavailable' | 'ip_blocked'

// Wording that blames the sending host or its reputation, not the recipient.
const BLOCKED = /spamhaus|barracuda|spamcop|sorbs|black ?list|block ?list|\bblocked\b|\bbanned\b|\blisted\b|\brbl\b|dnsbl|reputation|client host|your ip|sender ip|ip address|connection refused|too many connections from|not allowed to send|denied by policy|see https?:\/\/\S*(spamhaus|block|rbl)/i
// Wording that says the mailbox does not exist.
const NOT_FOUND = /user unknown|unknown user|no such (user|mailbox|recipient|address)|does ?n[o']t exist|not exist|not found|unknown (recipient|address|mailbox)|invalid (recipient|mailbox|address)|recipient (address )?rejected|mailbox unavailable|no mailbox|address rejected|undeliverable address|unrouteable|user not|account (does not exist|not found)/i
const DISABLED = /disabled|deactivated|inactive|suspended|no longer (active|in use|available)|account (is )?(locked|closed)/i
const FULL = /mailbox (is )?full|over ?quota|quota exceeded|exceeded (the )?(storage|quota)|insufficient (system )?storage|mailbox size limit/i
const TOO_MANY = /too many recipients|recipient limit/i

/**
 * Classifies a reply to `RCPT TO` by basic code (RFC 5321 §4.2), enhanced code
 * (RFC 3463: X.1.1 bad mailbox, X.2.1 disabled, X.2.2 full, X.5.3 too many recipients,
 * X.7.x security/policy) and wording, so that `mailbox_not_found` is told apart from
 * `ip_blocked` (a refusal of us, not of the address) and `mailbox_full`.
 */
export function classifyRcpt (reply: SmtpReply): RcptOutcome {
  const { code, enhanced, message } = reply
  if (code >= 200 && code < 300) return 'accepted'
  const sub = enhanced ? enhanced.slice(2) : null
  if (code >= 500) {
    if (sub === '2.2' || (code === 552 && FULL.test(message)) || FULL.test(message)) return 'mailbox_full'
    if (sub === '7.1' || sub?.startsWith('7.') === true) {
      if (BLOCKED.test(message)) return 'ip_blocked'
      if (NOT_FOUND.test(message)) return 'mailbox_not_found'
      return 'rejected_email'
    }
    if (BLOCKED.test(message) && !NOT_FOUND.test(message)) return 'ip_blocked'
    if (sub === '2.1' || DISABLED.test(message)) return 'mailbox_disabled'
    if (sub === '1.1' || sub === '1.0' || sub === '1.10' || sub === '1.6' || NOT_FOUND.test(message)) return 'mailbox_not_found'
    if (code === 550 && enhanced === null && message === '') return 'mailbox_not_found'
    return 'rejected_email'
  }
  if (code >= 400) {
    if (sub === '5.3' || TOO_MANY.test(message)) return 'too_many_recipients'
    if (sub === '2.2' || FULL.test(message)) return 'mailbox_full'
    if (code === 421) return 'smtp_unavailable'
    if (sub?.startsWith('7.') === true && BLOCKED.test(message)) return 'ip_blocked'
    if (code === 450 || code === 451 || code === 452) return 'greylisted'
    return 'smtp_unavailable'
  }
  return 'smtp_unavailable'
}

/**
 * Classifies a refusal before `RCPT` (banner, EHLO, MAIL FROM): it concerns the session,
 * never the mailbox, so it is one of the `unknown` reasons.
 */
export function classifySessionRefusal (reply: SmtpReply): 'ip_blocked' | 'smtp_unavailable' {
  const sub = reply.enhanced ? reply.enhanced.slice(2) : null
  if (BLOCKED.test(reply.message) || (reply.code >= 500 && sub?.startsWith('7.') === true)) return 'ip_blocked'
  if (reply.code === 554 && /no smtp service|not accepting/i.test(reply.message)) return 'smtp_unavailable'
  return 'smtp_unavailable'
}
