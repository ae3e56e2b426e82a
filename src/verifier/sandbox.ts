import type { CheckName } from '../domain/checks.ts'
import { localChecks } from './local-checks.ts'
import type { CheckRecord, Reason, VerificationResult } from './result.ts'
import { firmReason, resultOf } from './verdict.ts'

/**
 * What the network would have answered, by the magic local part of a test key's address
 * (docs/design/verification.md "Sandbox"): the SMTP reply and, for `accept-all@`, a catch-all domain.
 */
interface Simulated {
  smtp: 'accepted' | Reason
  accept_all?: boolean
  flag?: 'disposable' | 'role'
  reply: { code: number; enhanced_code: string | null; message: string }
}
const OK = { code: 250, enhanced_code: '2.1.5', message: 'OK (sandbox)' }
const MAGIC: Readonly<Record<string, Simulated>> = {
  valid: { smtp: 'accepted', reply: OK },
  invalid: { smtp: 'mailbox_not_found', reply: { code: 550, enhanced_code: '5.1.1', message: 'No such user (sandbox)' } },
  'accept-all': { smtp: 'accepted', accept_all: true, reply: OK },
  disposable: { smtp: 'accepted', flag: 'disposable', reply: OK },
  role: { smtp: 'accepted', flag: 'role', reply: OK },
  'mailbox-full': { smtp: 'mailbox_full', reply: { code: 452, enhanced_code: '4.2.2', message: 'Mailbox full (sandbox)' } },
  greylisted: { smtp: 'greylisted', reply: { code: 450, enhanced_code: '4.7.1', message: 'Greylisted, try again later (sandbox)' } },
  timeout: { smtp: 'timeout', reply: { code: 0, enhanced_code: null, message: 'no answer within the timeout (sandbox)' } },
  unknown: { smtp: 'smtp_unavailable', reply: { code: 421, enhanced_code: '4.3.2', message: 'Service not available (sandbox)' } }
}

/**
 * The result of a test key (`svc_test_…`): no network, no wallet. Every local check asked
 * for runs for real, as in live mode (syntax, typo, disposable, role, free: a typo gets its
 * `did_you_mean`, `mailinator.com` is disposable, `info@` a role, `gmail.com` free); only
 * what needs the network is simulated, from the local part: `valid@`, `invalid@`,
 * `accept-all@`, `disposable@`, `role@`, `mailbox-full@`, `greylisted@`, `timeout@`,
 * `unknown@` (any other local part answers as `valid@`). DNS answers `mx.<domain>`; SMTP and
 * catch-all answer as the local part says; without SMTP asked for, the verdict comes from
 * the checks that ran, as in live mode (`smtp_not_requested`).
 */
export function simulate(email: string, checks: readonly CheckName[], now: Date): VerificationResult {
  const local = localChecks(email, checks)
  const records: CheckRecord[] = local.records.map(r => ({ ...r }))
  const flags = [...local.flags]
  const base = { email, normalized: local.normalized, did_you_mean: local.did_you_mean }
  if (!local.ok) return resultOf({ ...base, flags, mx: null, checks: records }, 'invalid_syntax', now, { sandbox: true })
  const magic = MAGIC[local.local.toLowerCase().split('+')[0]] ?? MAGIC.valid
  const mx = checks.includes('dns') ? { host: `mx.${local.domain}`, preference: 10, provider: null } : null
  if (mx) records.push({ name: 'dns', outcome: 'pass', duration_ms: 0, detail: `sandbox: MX ${mx.host}` })
  if (!checks.includes('smtp'))
    return resultOf({ ...base, flags, mx, checks: records }, firmReason(flags, local.did_you_mean, 'not_requested'), now, {
      sandbox: true,
      smtp_requested: false
    })
  const accepted = magic.smtp === 'accepted'
  records.push({
    name: 'smtp',
    outcome: accepted ? 'pass' : magic.smtp === 'mailbox_full' || magic.smtp === 'greylisted' ? 'warn' : magic.smtp === 'mailbox_not_found' ? 'fail' : 'error',
    duration_ms: 0,
    detail: `sandbox: ${magic.reply.code} ${magic.reply.message}`
  })
  if (magic.flag && !flags.includes(magic.flag)) flags.push(magic.flag)
  if (checks.includes('catch_all') && accepted) {
    records.push({
      name: 'catch_all',
      outcome: magic.accept_all ? 'warn' : 'pass',
      duration_ms: 0,
      detail: magic.accept_all ? 'sandbox: the domain accepts any address' : 'sandbox: the domain rejects unknown addresses'
    })
    if (magic.accept_all) flags.push('accept_all')
  }
  if (magic.smtp === 'mailbox_full') flags.push('mailbox_full')
  const reason: Reason = magic.smtp === 'accepted' ? firmReason(flags, local.did_you_mean, 'accepted') : magic.smtp
  return resultOf({ ...base, flags, mx, checks: records }, reason, now, { sandbox: true, smtp: magic.reply.code === 0 ? null : magic.reply })
}
