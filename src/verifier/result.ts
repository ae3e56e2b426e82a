/** Deliverability verdict (docs/design/verification.md "Result of one address"; the interface's filter values). */
export type Verdict = 'valid' | 'invalid' | 'risky' | 'unknown'

/** Primary reason, per verdict (docs/design/verification.md "Reasons"). */
export type Reason =
  | 'accepted_email'
  | 'invalid_syntax'
  | 'invalid_domain'
  | 'no_mail_server'
  | 'mailbox_not_found'
  | 'mailbox_disabled'
  | 'rejected_email'
  | 'accept_all'
  | 'disposable'
  | 'role_account'
  | 'mailbox_full'
  | 'low_quality'
  | 'greylisted'
  | 'timeout'
  | 'no_connect'
  | 'smtp_unavailable'
  | 'ip_blocked'
  | 'unexpected_error'
  | 'proxy_error'
  | 'smtp_not_requested'

export const VERDICT_OF: Readonly<Record<Reason, Verdict>> = {
  accepted_email: 'valid',
  invalid_syntax: 'invalid',
  invalid_domain: 'invalid',
  no_mail_server: 'invalid',
  mailbox_not_found: 'invalid',
  mailbox_disabled: 'invalid',
  rejected_email: 'invalid',
  accept_all: 'risky',
  disposable: 'risky',
  role_account: 'risky',
  mailbox_full: 'risky',
  low_quality: 'risky',
  greylisted: 'unknown',
  timeout: 'unknown',
  no_connect: 'unknown',
  smtp_unavailable: 'unknown',
  ip_blocked: 'unknown',
  unexpected_error: 'unknown',
  proxy_error: 'unknown',
  /** The checks asked for ran and flagged nothing; the mailbox was not asked (SMTP not among them). */
  smtp_not_requested: 'unknown'
}

export interface CheckRecord {
  name: string
  outcome: 'pass' | 'fail' | 'warn' | 'error' | 'skipped'
  /** Wall time of the check, milliseconds. */
  duration_ms: number
  detail: string | null
}

/** The engine's answer for one address. */
export interface VerificationResult {
  email: string
  normalized: string | null
  verdict: Verdict
  reason: Reason
  /** 0–100; 0 for invalid, 80–100 only for valid. */
  score: number
  score_breakdown: Array<{ factor: string; points: number }>
  flags: string[]
  did_you_mean: string | null
  mx: { host: string; preference: number; provider: string | null } | null
  smtp: { code: number; enhanced_code: string | null; message: string } | null
  checks: CheckRecord[]
  retryable: boolean
  checked_at: string
  cached: boolean
  sandbox: boolean
}

/** A copy of a result that shares nothing mutable with it. */
export function copyResult(r: VerificationResult): VerificationResult {
  return {
    ...r,
    score_breakdown: r.score_breakdown.map(b => ({ ...b })),
    flags: [...r.flags],
    mx: r.mx ? { ...r.mx } : null,
    smtp: r.smtp ? { ...r.smtp } : null,
    checks: r.checks.map(c => ({ ...c }))
  }
}
