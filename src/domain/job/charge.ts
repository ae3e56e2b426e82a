import { costOf, isCheckName } from '../checks.ts'

/** What the charge reads of a verification result (src/verifier/result.ts `VerificationResult`). */
export interface ChargedResult {
  verdict: string
  reason: string
  sandbox?: boolean
  checks: ReadonlyArray<{ name: string; outcome: string }>
}

/**
 * Tokens a result costs: the checks that ran and were requested; nothing for an `unknown`
 * that a check could not answer, nothing in the sandbox (docs/design/verification.md policy).
 * `smtp_not_requested` is an answer to every check asked for (SMTP was not among them):
 * those are charged. The one rule for single jobs (JobCompleted) and batch items.
 */
export function chargeFor(result: ChargedResult, requested: readonly string[]): number {
  if ((result.verdict === 'unknown' && result.reason !== 'smtp_not_requested') || result.sandbox) return 0
  const ran = result.checks
    .filter(c => c.outcome !== 'skipped')
    .map(c => c.name)
    .filter(isCheckName)
    .filter(c => requested.includes(c))
  return costOf([...new Set(ran)])
}
