import type { RcptOutcome } from './classify.ts'
import { scoreOf } from './score.ts'
import { VERDICT_OF, type CheckRecord, type Reason, type VerificationResult } from './result.ts'

/**
 * The verdict rules (docs/design/verification.md "Reasons"), in one place for the engine and the
 * test-key sandbox, so that both answer alike for the same reason.
 */

/**
 * Reasons whose answer may differ on a later try: not cached, and (for jobs) greylisting
 * is retried. A full mailbox is temporary (RFC 3463 X.2.2 is a persistent-transient
 * status), so it is among them.
 */
const RETRYABLE: ReadonlySet<Reason> = new Set([
  'greylisted',
  'timeout',
  'no_connect',
  'smtp_unavailable',
  'ip_blocked',
  'unexpected_error',
  'proxy_error',
  'mailbox_full'
])

/** What is known of an address when its verdict is made. */
export interface Findings {
  email: string
  normalized: string | null
  flags: readonly string[]
  did_you_mean: string | null
  mx: VerificationResult['mx']
  checks: readonly CheckRecord[]
}

/**
 * The result for `reason`: its verdict, score and retryability. `smtp_requested: false`
 * marks an `unknown` that comes from SMTP not being asked for (retrying would tell nothing more).
 */
export function resultOf(f: Findings, reason: Reason, at: Date, extra: Partial<VerificationResult> & { smtp_requested?: boolean } = {}): VerificationResult {
  const { smtp_requested: smtpRequested = true, ...rest } = extra
  const { score, breakdown } = scoreOf(reason, f.flags)
  return {
    email: f.email,
    normalized: f.normalized,
    verdict: VERDICT_OF[reason],
    reason,
    score,
    score_breakdown: breakdown,
    flags: [...f.flags],
    did_you_mean: f.did_you_mean,
    mx: f.mx,
    smtp: null,
    checks: f.checks.map(c => ({ ...c })),
    retryable: smtpRequested && RETRYABLE.has(reason),
    checked_at: at.toISOString(),
    cached: false,
    sandbox: false,
    ...rest
  }
}

/**
 * The reason once nothing found the address invalid: disposable makes it risky; without
 * an SMTP answer it is not known (`smtp_unavailable`); a domain that looks like a typo of
 * a well-known one makes it `low_quality` (such domains are often traps); a catch-all
 * domain makes an accepted mailbox `accept_all`; a role local part makes it risky; an
 * accepted mailbox is valid. When SMTP was not asked for (`not_requested`), the same
 * order decides from the checks that ran, and an address none of them flagged is
 * `smtp_not_requested` (verdict `unknown`: nobody asked the mailbox), never a failure
 * reason for a check nobody asked for.
 */
export function firmReason(flags: readonly string[], didYouMean: string | null, smtp: 'accepted' | 'unavailable' | 'not_requested'): Reason {
  if (flags.includes('disposable')) return 'disposable'
  if (smtp === 'unavailable') return 'smtp_unavailable'
  if (didYouMean !== null) return 'low_quality'
  if (flags.includes('accept_all')) return 'accept_all'
  if (flags.includes('role')) return 'role_account'
  return smtp === 'accepted' ? 'accepted_email' : 'smtp_not_requested'
}

/**
 * The reason a refused `RCPT TO` gives (accepted ones go through `firmReason`). A policy
 * refusal (RFC 3463 X.7.x that does not blame our host) says nothing about the mailbox:
 * `smtp_unavailable`, an `unknown` reason, never `invalid`.
 */
export function refusalReason(outcome: Exclude<RcptOutcome, 'accepted'>): Reason {
  switch (outcome) {
    case 'too_many_recipients':
    case 'rate_limited':
      return 'smtp_unavailable'
    case 'policy_rejected':
      return 'smtp_unavailable'
    default:
      return outcome
  }
}

/** How an RCPT answer reads as a check outcome: accepted passes, temporary refusals warn, the rest fail. */
export function rcptCheckOutcome(outcome: RcptOutcome): CheckRecord['outcome'] {
  return outcome === 'accepted' ? 'pass' : outcome === 'mailbox_full' || outcome === 'greylisted' ? 'warn' : 'fail'
}
