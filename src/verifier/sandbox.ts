import type { CheckName } from '../domain/checks.ts'
import { parseAddress } from './syntax.ts'
import type { Reason, VerificationResult } from './result.ts'
import { resultOf } from './verdict.ts'

// Magic local parts of test keys (VERIFICATION.md "Sandbox").
const MAGIC: Readonly<Record<string, { reason: Reason, flags: string[] }>> = {
  valid: { reason: 'accepted_email', flags: [] },
  invalid: { reason: 'mailbox_not_found', flags: [] },
  'accept-all': { reason: 'accept_all', flags: ['accept_all'] },
  disposable: { reason: 'disposable', flags: ['disposable'] },
  role: { reason: 'role_account', flags: ['role'] },
  'mailbox-full': { reason: 'mailbox_full', flags: ['mailbox_full'] },
  greylisted: { reason: 'greylisted', flags: [] },
  timeout: { reason: 'timeout', flags: [] },
  unknown: { reason: 'smtp_unavailable', flags: [] }
}

/**
 * Simulated result for test keys (`svc_test_…`): no network, no wallet. The local part
 * picks the branch (`valid@`, `invalid@`, `accept-all@`, `disposable@`, `role@`,
 * `mailbox-full@`, `greylisted@`, `timeout@`, `unknown@`); any other syntactically valid
 * address is valid; bad syntax is `invalid_syntax` as in live mode.
 */
export function simulate (email: string, checks: readonly CheckName[], now: Date): VerificationResult {
  const parsed = parseAddress(email)
  const magic = parsed.ok ? MAGIC[parsed.local.toLowerCase().split('+')[0]] ?? MAGIC.valid : { reason: 'invalid_syntax' as const, flags: [] }
  return resultOf({
    email,
    normalized: parsed.ok ? parsed.normalized : null,
    flags: magic.flags,
    did_you_mean: null,
    mx: parsed.ok ? { host: `mx.${parsed.ascii_domain}`, preference: 10, provider: null } : null,
    checks: checks.map(name => ({ name, outcome: 'skipped' as const, duration_ms: 0, detail: 'sandbox: simulated result' }))
  }, magic.reason, now, { sandbox: true })
}
