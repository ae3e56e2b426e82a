import type { Reason } from './result.ts'

// Base score per reason: how likely mail to the address is delivered and read.
const BASE: Readonly<Record<Reason, number>> = {
  accepted_email: 100,
  invalid_syntax: 0,
  invalid_domain: 0,
  no_mail_server: 0,
  mailbox_not_found: 0,
  mailbox_disabled: 0,
  rejected_email: 0,
  accept_all: 60,
  role_account: 70,
  mailbox_full: 40,
  disposable: 20,
  low_quality: 50,
  greylisted: 55,
  smtp_unavailable: 45,
  ip_blocked: 50,
  timeout: 40,
  no_connect: 30,
  unexpected_error: 30,
  // The mail server was not asked (our proxy failed): nothing is known either way.
  proxy_error: 50,
  // Nothing local flagged it, and nobody asked the mailbox: as likely as an unknown that was tried.
  smtp_not_requested: 50
}

/**
 * Score 0–100 with the factors that moved it (docs/design/verification.md): 0 for invalid; 80–100
 * only for valid (a free-provider mailbox loses 5 points: such inboxes are abandoned
 * more often); risky 20–70; unknown 30–55.
 */
export function scoreOf(reason: Reason, flags: readonly string[]): { score: number; breakdown: Array<{ factor: string; points: number }> } {
  const breakdown = [{ factor: `reason:${reason}`, points: BASE[reason] }]
  if (BASE[reason] > 0 && flags.includes('free')) breakdown.push({ factor: 'flag:free', points: -5 })
  const score = Math.max(
    0,
    Math.min(
      100,
      breakdown.reduce((s, f) => s + f.points, 0)
    )
  )
  return { score, breakdown }
}
