import { parseAddress } from '../../verifier/syntax.ts'
import { isDisposableDomain } from '../../verifier/lists.ts'
import type { CommandContext } from '../context.ts'

/** What sign-up screening says of an address (interface: signup-preview). */
export interface Screening {
  may_sign_up: boolean
  refusal: 'disposable_email' | 'undeliverable_email' | null
  verdict: string | null
  reason: string | null
  did_you_mean: string | null
  checks: Array<{ name: string; outcome: string }>
}

/**
 * Screens an address for sign-up with the verification engine (syntax, typo, disposable,
 * DNS and SMTP): disposable → refused; a firm `invalid` verdict (no such domain, no mail
 * server, no such mailbox) → refused as undeliverable; `unknown` (the check could not
 * tell, e.g. port 25 blocked) is let through.
 */
export async function signupPreview(ctx: CommandContext, email: string): Promise<Screening> {
  const parsed = parseAddress(email)
  if (!parsed.ok)
    return {
      may_sign_up: false,
      refusal: 'undeliverable_email',
      verdict: 'invalid',
      reason: 'invalid_syntax',
      did_you_mean: null,
      checks: [{ name: 'syntax', outcome: 'fail' }]
    }
  if (isDisposableDomain(parsed.ascii_domain))
    return {
      may_sign_up: false,
      refusal: 'disposable_email',
      verdict: 'risky',
      reason: 'disposable',
      did_you_mean: null,
      checks: [
        { name: 'syntax', outcome: 'pass' },
        { name: 'disposable', outcome: 'fail' }
      ]
    }
  if (!ctx.screen)
    return {
      may_sign_up: true,
      refusal: null,
      verdict: null,
      reason: null,
      did_you_mean: null,
      checks: [
        { name: 'syntax', outcome: 'pass' },
        { name: 'disposable', outcome: 'pass' }
      ]
    }
  const r = await ctx.screen(parsed.normalized)
  const refused = r.verdict === 'invalid'
  return {
    may_sign_up: !refused,
    refusal: refused ? 'undeliverable_email' : null,
    verdict: r.verdict,
    reason: r.reason,
    did_you_mean: r.did_you_mean,
    checks: r.checks.map(c => ({ name: c.name, outcome: c.outcome }))
  }
}
