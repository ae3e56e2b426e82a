/**
 * What each problem `code` means (RFC 9457 §3.1.1: a problem's `type` URI resolves to a
 * page for people; ours is `/problems/<code>`). A code is `<operation>.<reason>`: the page
 * names the operation and explains the reason from this table of reasons, each with the
 * status it comes with and what to do. A code whose reason is not here has no page (404).
 */
import reasons from './problem-reasons.json' with { type: 'json' }

export interface ProblemReason {
  status: number
  title: string
  meaning: string
  action: string
}

/** A reason of the table: whole, or an invalid field given by its name and rule (worded alike for every field). */
type Entry = ProblemReason | { status: 400; field: string; rule: string }

const invalidField = (field: string, rule: string): ProblemReason => ({
  status: 400,
  title: `Invalid ${field}`,
  meaning: `The ${field} given does not meet the rule: ${rule}.`,
  action: `Correct the ${field} and send the request again; \`detail\` (and \`errors\` where given) says what is wrong.`
})

/**
 * Reasons by name (the part of a code after its operation). The texts are data, kept in
 * `problem-reasons.json` beside this file (read once at import; the docs quote them).
 */
export const PROBLEM_REASONS: Readonly<Record<string, ProblemReason>> = Object.freeze(
  Object.fromEntries(Object.entries(reasons as Record<string, Entry>).map(([name, e]) => [name, 'field' in e ? invalidField(e.field, e.rule) : e]))
)

/** Codes that are not `<operation>.<reason>`: the catch-all errors. */
const WHOLE: Readonly<Record<string, ProblemReason>> = {
  internal_error: {
    status: 500,
    title: 'Unexpected error',
    meaning: 'Something went wrong on our side; it was logged, nothing of the request is half-done that a retry would repeat.',
    action: 'Try again; if it persists, tell the operator (with the time of the request).'
  }
}

/** What a problem code means, or null when it is not a code this service answers. */
export function problemType(code: string): (ProblemReason & { code: string; operation: string | null }) | null {
  if (WHOLE[code]) return { ...WHOLE[code], code, operation: null }
  const m = /^([a-z][a-z0-9_]{0,60})\.([a-z][a-z0-9_]{0,60})$/.exec(code)
  if (!m) return null
  const reason = PROBLEM_REASONS[m[2]]
  return reason
    ? { ...reason, code, operation: m[1] === 'request' || m[1] === 'route' ? null : m[1].replaceAll('_', ' ') }
    : m[1] === 'route' && m[2] === 'not_found'
      ? {
          status: 404,
          title: 'No such route',
          meaning: 'No operation answers at this method and path.',
          action: 'See the API document (`/docs`).',
          code,
          operation: null
        }
      : null
}
