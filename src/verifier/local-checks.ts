import type { CheckName } from '../domain/checks.ts'
import { parseAddress } from './syntax.ts'
import { suggestCorrection } from './typo.ts'
import { isDisposableDomain, isFreeDomain, isRoleLocalPart } from './lists.ts'
import type { CheckRecord } from './result.ts'

/** What the checks that need no network found of an address (docs/design/verification.md checks 1–3). */
export interface LocalFindings {
  email: string
  /** Whether the syntax holds (RFC 5321/6531); the other checks ran only then. */
  ok: boolean
  normalized: string | null
  local: string
  /** ASCII (punycode) domain, lower case. */
  domain: string
  did_you_mean: string | null
  flags: string[]
  records: CheckRecord[]
}

const round1 = (ms: number): number => Math.round(ms * 10) / 10

function timed<T>(records: CheckRecord[], name: string, fn: () => T, outcome: (v: T) => [CheckRecord['outcome'], string | null]): T {
  const t0 = performance.now()
  const v = fn()
  const [o, detail] = outcome(v)
  records.push({ name, outcome: o, duration_ms: round1(performance.now() - t0), detail })
  return v
}

/**
 * The checks that look the address up in a maintained list: each flags the address with
 * its own name when listed (a disposable or role address is a warning; a free provider is
 * only a fact about the address).
 */
const LIST_CHECKS: ReadonlyArray<{
  check: 'disposable' | 'role' | 'free'
  listed: (f: LocalFindings) => boolean
  outcome: CheckRecord['outcome']
  detail: string
}> = [
  { check: 'disposable', listed: f => isDisposableDomain(f.domain), outcome: 'warn', detail: 'disposable-mail domain' },
  { check: 'role', listed: f => isRoleLocalPart(f.local), outcome: 'warn', detail: 'role account' },
  { check: 'free', listed: f => isFreeDomain(f.domain), outcome: 'pass', detail: 'free mailbox provider' }
]

/**
 * The local checks of an address, as the engine and the test-key sandbox both run them:
 * `syntax` always (RFC 5321 mailbox, RFC 6531 and IDN domains, a public suffix), then the
 * requested ones of `typo` (a suggestion against the common mailbox providers; flag
 * `possible_typo`), `disposable`, `role` and `free` (maintained lists; flags of the same
 * names), each with its record (outcome, duration in ms, detail). No I/O.
 */
export function localChecks(email: string, checks: readonly CheckName[]): LocalFindings {
  const records: CheckRecord[] = []
  const parsed = timed(
    records,
    'syntax',
    () => parseAddress(email),
    p => (p.ok ? ['pass', null] : ['fail', p.detail])
  )
  if (!parsed.ok) return { email, ok: false, normalized: null, local: '', domain: '', did_you_mean: null, flags: [], records }
  const f: LocalFindings = {
    email,
    ok: true,
    normalized: parsed.normalized,
    local: parsed.local,
    domain: parsed.ascii_domain,
    did_you_mean: null,
    flags: [],
    records
  }
  if (checks.includes('typo')) {
    f.did_you_mean = timed(
      records,
      'typo',
      () => suggestCorrection(parsed.normalized),
      s => [s ? 'warn' : 'pass', s ? `did you mean ${s}?` : null]
    )
    if (f.did_you_mean) f.flags.push('possible_typo')
  }
  for (const list of LIST_CHECKS) {
    if (!checks.includes(list.check)) continue
    const listed = timed(
      records,
      list.check,
      () => list.listed(f),
      v => [v ? list.outcome : 'pass', v ? list.detail : null]
    )
    if (listed) f.flags.push(list.check)
  }
  return f
}
