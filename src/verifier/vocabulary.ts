import type { CheckName } from '../domain/checks.ts'
import type { Reason, Verdict } from './result.ts'

/**
 * The vocabulary of results: what each verdict,
 * reason, flag, check and check outcome means, and what a sender should do about it —
 * one source for the OpenAPI document's enums, the reference page (`/reference/results`)
 * and the console. docs/design/verification.md "Result of one address" is the design it follows.
 */

/** What a sender does with an address of a verdict. */
type Action = 'send' | 'do not send' | 'send with care' | 'retry later'

export interface Term {
  meaning: string
  action?: Action
  advice?: string
}

export const VERDICTS: Readonly<Record<Verdict, Term>> = {
  valid: { meaning: 'The mailbox exists and accepts mail: the receiving server said yes to this address.', action: 'send' },
  invalid: {
    meaning:
      'Mail to this address will bounce: the syntax is wrong, the domain has no mail server, or the server said the mailbox does not exist or is disabled.',
    action: 'do not send',
    advice: 'Remove it from the list; a bounce hurts your sending reputation.'
  },
  risky: {
    meaning: 'Mail may be delivered but with a risk: a catch-all domain, a disposable or role address, a full mailbox, or a domain that looks like a typo.',
    action: 'send with care',
    advice: 'Keep it out of cold or bulk sends; look at the reason and the flags.'
  },
  unknown: {
    meaning:
      'No firm answer: the server did not say (greylisting, a timeout, a refusal of us rather than of the address), or the mailbox was not asked. Not charged when a check could not answer; when the mailbox was not asked (`smtp_not_requested`), the checks that ran are charged.',
    action: 'retry later',
    advice: 'Verify again later (a `retryable` result may answer then); do not treat it as invalid.'
  }
}

export const REASONS: Readonly<Record<Reason, Term & { verdict: Verdict }>> = {
  accepted_email: { verdict: 'valid', meaning: 'The server accepted the recipient (RCPT TO answered 250) and the domain is not a catch-all.', action: 'send' },
  invalid_syntax: {
    verdict: 'invalid',
    meaning: 'Not a deliverable address: bad syntax, too long, or a domain without a public suffix (RFC 5321, RFC 6531).',
    action: 'do not send',
    advice: 'Correct it if it is a typing error; otherwise remove it.'
  },
  invalid_domain: {
    verdict: 'invalid',
    meaning: 'The domain does not exist (DNS NXDOMAIN).',
    action: 'do not send',
    advice: 'Look at `did_you_mean`; otherwise remove it.'
  },
  no_mail_server: {
    verdict: 'invalid',
    meaning: 'The domain exists but takes no mail: no MX and no address record, or a null MX (RFC 7505).',
    action: 'do not send'
  },
  mailbox_not_found: {
    verdict: 'invalid',
    meaning: 'The server said the mailbox does not exist (5.1.1 and kin).',
    action: 'do not send',
    advice: 'Remove it: mail to it bounces.'
  },
  mailbox_disabled: { verdict: 'invalid', meaning: 'The server said the mailbox is disabled or suspended (5.2.1).', action: 'do not send' },
  rejected_email: {
    verdict: 'invalid',
    meaning: 'Another permanent refusal of the address by the receiving server (a 5xx about the address, not about us or a policy).',
    action: 'do not send'
  },
  accept_all: {
    verdict: 'risky',
    meaning: 'The domain accepts any address (catch-all): the server said yes, but it says yes to a made-up address too, so this one may not be read.',
    action: 'send with care',
    advice: 'Send to engaged or recent contacts only.'
  },
  disposable: {
    verdict: 'risky',
    meaning: 'A throwaway mailbox provider: the address works for a short while and is rarely read after.',
    action: 'send with care',
    advice: 'Do not count it as a lasting contact.'
  },
  role_account: {
    verdict: 'risky',
    meaning: 'A role address (info@, admin@, sales@…) reaching a team or a list rather than a person.',
    action: 'send with care',
    advice: 'Fine for transactional mail; avoid in marketing, where complaints come more often.'
  },
  mailbox_full: {
    verdict: 'risky',
    meaning: 'The mailbox exists but is full (5.2.2 / 4.2.2): mail bounces until it is emptied, and a full mailbox is often abandoned.',
    action: 'send with care',
    advice: 'Retry later; remove it if it stays full.'
  },
  low_quality: {
    verdict: 'risky',
    meaning: 'The server accepted the address, but its domain looks like a typo of a well-known one (such domains are often traps).',
    action: 'send with care',
    advice: 'Offer the `did_you_mean` correction to the person.'
  },
  greylisted: {
    verdict: 'unknown',
    meaning: 'The server asked us to come back later (450/451 greylisting) and did not answer firmly before the deadline.',
    action: 'retry later'
  },
  timeout: { verdict: 'unknown', meaning: 'The DNS or SMTP server did not answer in time.', action: 'retry later' },
  no_connect: {
    verdict: 'unknown',
    meaning: 'No connection could be made to the mail server (refused, unreachable, or outbound port 25 blocked on our side).',
    action: 'retry later'
  },
  smtp_unavailable: {
    verdict: 'unknown',
    meaning:
      'The mail server answered without deciding about the address: busy (421, 4xx), or a policy refusal (5.7.x) that says nothing about whether the mailbox exists.',
    action: 'retry later',
    advice: 'Never treat it as invalid: a policy refusal is not a missing mailbox.'
  },
  ip_blocked: {
    verdict: 'unknown',
    meaning: 'The receiving server refused us — our sending address or reputation (a blocklist, 5.7.x) — not the address.',
    action: 'retry later'
  },
  unexpected_error: { verdict: 'unknown', meaning: 'Something unforeseen happened on the way (a broken reply, an internal error).', action: 'retry later' },
  proxy_error: {
    verdict: 'unknown',
    meaning:
      'Our way out to the mail server failed: the SOCKS5 proxy this check goes through refused, failed or could not reach port 25. Nothing was learned about the address, and nothing is charged.',
    action: 'retry later',
    advice: 'Never treat it as invalid: the mail server was not asked.'
  },
  smtp_not_requested: {
    verdict: 'unknown',
    meaning: 'The checks asked for ran and flagged nothing, but the mailbox was not asked: SMTP was not among the checks. Charged for the checks that ran.',
    action: 'send with care',
    advice: 'Ask for the `smtp` check (and `catch_all`) to know whether the mailbox exists.'
  }
}

/** Flags a result may carry beside its reason. */
export const FLAGS = {
  free: { meaning: 'A free mailbox provider (gmail.com, yahoo.co.uk…): a personal rather than a work address.' },
  role: { meaning: 'The local part names a role (info@, admin@…) rather than a person.' },
  disposable: { meaning: 'A disposable (throwaway) mailbox provider.' },
  accept_all: { meaning: 'The domain accepts any address (catch-all).' },
  mailbox_full: { meaning: 'The mailbox is full.' },
  possible_typo: { meaning: 'The domain looks like a typo of a well-known one; `did_you_mean` has the correction.' }
} as const satisfies Record<string, Term>
export type Flag = keyof typeof FLAGS
export const FLAG_NAMES = Object.keys(FLAGS) as Flag[]

export const CHECKS: Readonly<Record<CheckName, Term>> = {
  syntax: {
    meaning:
      'The address is a deliverable mailbox address: RFC 5321 syntax, length limits, internationalized addresses (RFC 6531) and IDN domains, a public suffix. No network.'
  },
  typo: { meaning: 'The domain compared with common mailbox providers; a close miss gives `did_you_mean`. No network.' },
  disposable: { meaning: 'The domain looked up in a maintained list of disposable providers. No network.' },
  role: { meaning: 'The local part looked up in a maintained list of role names. No network.' },
  free: { meaning: 'The domain looked up in a maintained list of free providers. No network.' },
  dns: { meaning: "The domain's MX records (or its address, RFC 5321 §5.1); a null MX means no mail (RFC 7505)." },
  smtp: { meaning: 'The mail server asked about the mailbox (RCPT TO), never sending mail (no DATA).' },
  catch_all: { meaning: 'The mail server asked about a made-up address of the same domain: accepted means the domain accepts any address.' }
}

/** What a check's `outcome` says. */
export const CHECK_OUTCOMES = {
  pass: { meaning: 'The check ran and found nothing against the address.' },
  warn: { meaning: 'The check ran and found something to weigh (a typo, a disposable domain, a role, greylisting, a full mailbox, a catch-all).' },
  fail: { meaning: 'The check ran and found the address undeliverable.' },
  error: { meaning: 'The check could not answer (a timeout, a refused connection, a busy server).' },
  skipped: { meaning: 'The check did not run (the sandbox, or a check it depends on ended the verification first).' }
} as const satisfies Record<string, Term>

/** `x-enumDescriptions` and a markdown list for an enum of the document, from a table of terms. */
export function enumDoc(title: string, terms: Readonly<Record<string, Term>>): { description: string; 'x-enumDescriptions': Record<string, string> } {
  const line = (_k: string, t: Term): string =>
    `${t.meaning}${t.action ? ` **${t.action[0].toUpperCase()}${t.action.slice(1)}.**` : ''}${t.advice ? ` ${t.advice}` : ''}`
  return {
    description: `${title}\n\n${Object.entries(terms)
      .map(([k, t]) => `- \`${k}\`: ${line(k, t)}`)
      .join('\n')}\n\nAll of it, for people: \`/reference/results\`.`,
    'x-enumDescriptions': Object.fromEntries(Object.entries(terms).map(([k, t]) => [k, line(k, t)]))
  }
}
