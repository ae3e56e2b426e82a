import type { SmtpReply } from './smtp-client.ts'

/**
 * What a reply to `RCPT TO` says about the mailbox. `policy_rejected`: a security or policy
 * refusal (RFC 3463 X.7.x, or wording such as "access denied", "relay access denied") that
 * says nothing about whether the mailbox exists; it reads as the `unknown` reason
 * `smtp_unavailable` (verdict.ts `refusalReason`).
 */
export type RcptOutcome =
  | 'accepted'
  | 'mailbox_not_found'
  | 'mailbox_disabled'
  | 'rejected_email'
  | 'mailbox_full'
  | 'greylisted'
  | 'too_many_recipients'
  | 'rate_limited'
  | 'smtp_unavailable'
  | 'ip_blocked'
  | 'policy_rejected'

type Refused = Exclude<RcptOutcome, 'accepted'>

// Wording that blames the sending host, its IP address or its reputation (blocklists), not the recipient.
const HOST_BLAMED = new RegExp(
  [
    'spamhaus',
    'barracuda',
    'spamcop',
    'sorbs',
    'uceprotect',
    'abuseat',
    'dnsbl',
    String.raw`\brbl\b`,
    'black ?list',
    'block ?list',
    'blocked using',
    String.raw`\blisted\b`,
    'reputation',
    'client host',
    String.raw`(your|sending|sender|client) (ip|host|server|mail server|mta|network)\b`,
    'ip (address|netblock)',
    String.raw`\bip\b[^.]{0,40}\b(blocked|banned|rejected|listed|not (accepted|authori[sz]ed|allowed))`,
    String.raw`(banned|blocked) (sending )?ip\b`,
    'from this ip',
    String.raw`\b(messages?|connections?|mail|traffic)\b[^.]{0,30}\bfrom \[?\d{1,3}(\.\d{1,3}){3}`,
    'too many connections from',
    'unusual rate',
    String.raw`\bptr\b`,
    'reverse (dns|hostname)',
    'cannot find your (reverse )?hostname',
    'ipcheck',
    'dynamic(ally)?[- ]assigned'
  ].join('|'),
  'i'
)
// Wording of a policy refusal that names neither the mailbox nor our host: access rules of
// the recipient (denied, blocked, banned), relaying, authentication of our sender (SPF,
// DKIM, DMARC, sender verification).
const POLICY = new RegExp(
  [
    String.raw`\bdenied\b`,
    String.raw`\bblocked\b`,
    String.raw`\bbanned\b`,
    'not permitted',
    'not allowed',
    'unable to relay',
    'rcpthosts',
    'not authori[sz]ed',
    'unauthori[sz]ed',
    'unauthenticated',
    'authentication required',
    'prohibit',
    String.raw`\bpolic(y|ies)\b`,
    'sender (address |domain )?rejected',
    'sender verif(y|ication) failed',
    String.raw`\bspf\b`,
    String.raw`\bdkim\b`,
    String.raw`\bdmarc\b`,
    'envelope rejected'
  ].join('|'),
  'i'
)
// Wording that says the mailbox does not exist.
const NOT_FOUND = new RegExp(
  [
    'user unknown',
    'unknown user',
    'user is unknown',
    'no such (user|mailbox|recipient|address|account)',
    'no mailbox',
    "(does ?n[o']t|not) exist",
    'not found',
    'unknown (recipient|address|mailbox|local.?part)',
    'addressee unknown',
    'invalid (recipient|mailbox|address)',
    'mailbox unavailable',
    'undeliverable address',
    'unroute?able',
    'user not (found|known)',
    String.raw`does ?n[o']t have an? \S+ account`,
    'not our customer',
    'not listed in (the )?domino directory'
  ].join('|'),
  'i'
)
const DISABLED = /disabled|deactivated|inactive|suspended|discontinued|no longer (active|in use|available)|account (is |has been )?(locked|closed)/i
const FULL =
  /mailbox (is )?full|over ?quota|over storage|quota exceeded|exceeded (the )?(storage|quota)|exhausted (allowed )?storage|insufficient (system )?storage|mailbox size limit/i
const TOO_MANY = /too many recipients|recipient limit/i
/**
 * A temporary refusal that limits our client, not this envelope: a rate of recipients,
 * messages, connections or errors from our address (Postfix's anvil: `450 4.7.1 Error: too
 * many recipients from [192.0.2.1]`; Exim's ratelimit ACLs: "sender rate overlimit").
 */
const CLIENT_LIMITED =
  /too many (recipients|messages|connections|errors|requests) from|rate ?limit|rate overlimit|sending rate|slow down|exceeded .*rate|rate .*exceeded/i
// Google answers a mailbox that receives too fast with 5.2.1 as well as 4.2.1 (Gmail SMTP errors and codes).
const RECEIVING_TOO_FAST = /receiving mail (too quickly|at a rate)/i
// Microsoft 365 directory-based edge blocking (DBEB): a recipient not in the tenant's directory.
const DBEB = /recipient address rejected: access denied/i
// qmail puts the enhanced code at the end, in parentheses: "… (#5.1.1)".
const TRAILING_ENHANCED = /\(#([245])\.(\d{1,3})\.(\d{1,3})\b/

/**
 * The permanent refusal that wording alone gives: first a full mailbox and too many
 * recipients, then a refusal of our host (blocklists, IP, reputation, reverse DNS) unless
 * it also says the mailbox is missing, then a policy refusal, then a disabled or missing
 * mailbox; `otherwise` when it says none of these. A policy wording wins over a missing-
 * mailbox wording: when the text is ambiguous, an `unknown` costs less than calling a good
 * address `invalid`.
 */
function byWording(message: string, otherwise: Refused): Refused {
  if (FULL.test(message)) return 'mailbox_full'
  if (TOO_MANY.test(message)) return 'too_many_recipients'
  const missing = NOT_FOUND.test(message)
  if (HOST_BLAMED.test(message) && !missing) return 'ip_blocked'
  if (POLICY.test(message)) return 'policy_rejected'
  if (DISABLED.test(message)) return 'mailbox_disabled'
  if (missing) return 'mailbox_not_found'
  return otherwise
}

type Rule = Refused | ((message: string) => Refused)

/**
 * Permanent replies by the subject and detail of their enhanced code (RFC 3463 §3.2–§3.6,
 * RFC 7505 §4 for X.1.10, RFC 5248 registry). X.7.x never gets here (see `classifyRcpt`).
 */
const PERMANENT: Readonly<Record<string, Rule>> = {
  '1.1': 'mailbox_not_found', // bad destination mailbox address
  '1.2': 'rejected_email', // bad destination system address (the domain)
  '1.3': 'rejected_email', // bad destination mailbox address syntax
  '1.6': 'mailbox_not_found', // destination mailbox has moved, no forwarding address
  '1.7': 'policy_rejected', // bad sender's mailbox address syntax: our MAIL FROM
  '1.8': 'policy_rejected', // bad sender's system address: our MAIL FROM's domain
  '1.10': 'mailbox_not_found', // recipient address has null MX
  // Mailbox disabled; Google also words a mailbox that receives too fast so.
  '2.1': m => (RECEIVING_TOO_FAST.test(m) ? 'smtp_unavailable' : 'mailbox_disabled'),
  '2.2': 'mailbox_full', // mailbox full (persistent: the mailbox exists)
  // Mailing list expansion problem: the address expands to nothing deliverable. OpenSMTPD
  // answers `524 5.2.4` for a recipient of a virtual-table domain with no entry and no `@`
  // catch-all (smtpd/lka_session.c, lka_expand: `aliases_virtual_get` finds nothing), an
  // alias loop or an empty expansion: mail to it can never be delivered. Not `mailbox_not_found`:
  // the same reply covers a loop in the receiver's own aliases.
  '2.4': 'rejected_email',
  // No answer from host; Microsoft 365 DBEB answers a recipient it does not know so.
  '4.1': m => (DBEB.test(m) ? 'mailbox_not_found' : 'smtp_unavailable'),
  '5.3': 'too_many_recipients'
}

/**
 * What the wording decides for an uninformative code (X.0.x "other or undefined status",
 * X.Y.0 "other … status" of a subject), by subject, when the wording names nothing.
 */
const UNINFORMATIVE: Readonly<Record<string, Refused>> = {
  '0': 'rejected_email', // no subject: docs/design/verification.md's "other permanent refusal"
  '1': 'mailbox_not_found', // other address status: about the address
  '2': 'rejected_email' // other mailbox status: about the mailbox
}

/** The enhanced code: as parsed, or qmail's trailing `(#5.1.1)` of the same class. */
function statusOf(reply: SmtpReply): { subject: string; detail: string } | null {
  if (reply.enhanced !== null) {
    const [, subject, detail] = reply.enhanced.split('.')
    return { subject, detail }
  }
  const m = TRAILING_ENHANCED.exec(reply.message)
  return m && m[1] === String(reply.code)[0] ? { subject: m[2], detail: m[3] } : null
}

/**
 * Classifies a reply to `RCPT TO` (RFC 5321 §4.2: 2yz accepted, 4yz transient, 5yz
 * permanent), by its enhanced status code first (RFC 3463 §3) and by its wording only
 * where the code says nothing more.
 *
 * - X.7.x (§3.8, security or policy status) never says the mailbox is missing, disabled or
 *   full: `ip_blocked` when the wording blames our host (blocklists, IP, reputation,
 *   reverse DNS), `policy_rejected` otherwise (access denied, relaying, sender
 *   authentication, DMARC/SPF of our probe) — both `unknown`, never `invalid`.
 * - 5.1.1, 5.1.6, 5.1.10 (§3.2, RFC 7505) → `mailbox_not_found`; 5.1.2, 5.1.3 →
 *   `rejected_email`; 5.1.7, 5.1.8 (our sender) → `policy_rejected`; 5.2.1 (§3.3) →
 *   `mailbox_disabled`; 5.2.2 → `mailbox_full`; 5.5.3 → `too_many_recipients`; other
 *   specific codes (mail system, routing, protocol, content: §3.4–§3.7) say nothing about
 *   the mailbox → `smtp_unavailable`.
 * - No enhanced code, X.0.x or X.Y.0: the wording decides (see `byWording`: a policy or
 *   host wording wins over a not-found wording), else 5.0.0 and no code → `rejected_email`,
 *   X.1.0 → `mailbox_not_found`, X.2.0 → `rejected_email`, X.3.0–X.6.0 → `smtp_unavailable`;
 *   a bare `550` with no text → `mailbox_not_found`.
 * - 4yz: a limit on our client (4.7.x or no code, worded as a rate or "too many … from")
 *   → `rate_limited` (the probe backs off that MX and asks again within the deadline, never
 *   at once); too many recipients in this envelope (4.5.3) → `too_many_recipients`; full
 *   (4.2.2), 421 → `smtp_unavailable`, 4.7.x with host wording → `ip_blocked`, 450/451/452
 *   → `greylisted`, else `smtp_unavailable`; never a verdict of `invalid`.
 * - 5.2.4 (mailing list expansion problem; OpenSMTPD's answer for a virtual-table recipient
 *   it has no entry for) → `rejected_email`.
 *
 * Provider exceptions: Microsoft 365 directory-based edge blocking answers an unknown
 * recipient `550 5.4.1 Recipient address rejected: Access denied. AS(201806281)` →
 * `mailbox_not_found`; Google words a mailbox receiving too fast as `550 5.2.1 … receiving
 * mail at a rate …` → `smtp_unavailable`; qmail's trailing `(#5.1.1)` is read as the
 * enhanced code.
 */
export function classifyRcpt(reply: SmtpReply): RcptOutcome {
  const { code, message } = reply
  if (code >= 200 && code < 300) return 'accepted'
  const status = statusOf(reply)
  if (code >= 500) {
    if (status === null) return code === 550 && message === '' ? 'mailbox_not_found' : byWording(message, 'rejected_email')
    const { subject, detail } = status
    if (subject === '7') return HOST_BLAMED.test(message) ? 'ip_blocked' : 'policy_rejected'
    const rule = PERMANENT[`${subject}.${detail}`]
    if (rule !== undefined) return typeof rule === 'function' ? rule(message) : rule
    if (subject === '0' || detail === '0') return byWording(message, UNINFORMATIVE[subject] ?? 'smtp_unavailable')
    return 'smtp_unavailable'
  }
  if (code >= 400) {
    const sub = status === null ? null : `${status.subject}.${status.detail}`
    // A limit on our client (4.7.x, or its wording): push-back that slows the MX down, never "envelope full".
    // (A 421 ends the session anyway; a limit blamed on our address's reputation stays `ip_blocked`.)
    if (code !== 421 && (status?.subject === '7' || status === null) && CLIENT_LIMITED.test(message) && !HOST_BLAMED.test(message)) return 'rate_limited'
    if (sub === '5.3' || TOO_MANY.test(message)) return 'too_many_recipients'
    if (sub === '2.2' || FULL.test(message)) return 'mailbox_full'
    if (code === 421) return 'smtp_unavailable'
    if (status?.subject === '7' && HOST_BLAMED.test(message)) return 'ip_blocked'
    if (code === 450 || code === 451 || code === 452) return 'greylisted'
    return 'smtp_unavailable'
  }
  return 'smtp_unavailable'
}

/**
 * Classifies a refusal before `RCPT` (banner, EHLO, MAIL FROM; RFC 5321 §4.2): it concerns
 * the session, never the mailbox, so it is one of the `unknown` reasons. `ip_blocked` when
 * the wording blames our host (blocklists, IP, reputation) or when a permanent X.7.x
 * (RFC 3463 §3.8) refuses the session; `smtp_unavailable` otherwise.
 */
export function classifySessionRefusal(reply: SmtpReply): 'ip_blocked' | 'smtp_unavailable' {
  const status = statusOf(reply)
  if (HOST_BLAMED.test(reply.message) || (reply.code >= 500 && status?.subject === '7')) return 'ip_blocked'
  return 'smtp_unavailable'
}
