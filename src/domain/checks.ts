/**
 * Verification checks (docs/design/verification.md "Checks"): each selectable per request, each with
 * a token cost published in `GET /api/config`. A job reserves the sum of the costs of
 * the checks that run, including the ones a requested check depends on.
 */
export const CHECK_NAMES = ['syntax', 'typo', 'disposable', 'role', 'free', 'dns', 'smtp', 'catch_all'] as const
export type CheckName = (typeof CHECK_NAMES)[number]

/**
 * Tokens charged per check: a full verification (every check) costs 10 tokens. The
 * network checks carry most of it; pure local checks are free.
 */
export const CHECK_COSTS: Readonly<Record<CheckName, number>> = {
  syntax: 0,
  typo: 0,
  disposable: 1,
  role: 0,
  free: 0,
  dns: 1,
  smtp: 6,
  catch_all: 2
}

/** Checks each check needs to have run first. */
const DEPENDS_ON: Readonly<Record<CheckName, readonly CheckName[]>> = {
  syntax: [],
  typo: ['syntax'],
  disposable: ['syntax'],
  role: ['syntax'],
  free: ['syntax'],
  dns: ['syntax'],
  smtp: ['syntax', 'dns'],
  catch_all: ['syntax', 'dns', 'smtp']
}

export function isCheckName(name: string): name is CheckName {
  return (CHECK_NAMES as readonly string[]).includes(name)
}

/** The requested checks plus their dependencies, in canonical order; all checks when none are given. */
export function resolveChecks(requested: readonly CheckName[] | undefined): CheckName[] {
  if (!requested || requested.length === 0) return [...CHECK_NAMES]
  const wanted = new Set<CheckName>()
  const add = (c: CheckName): void => {
    if (!wanted.has(c)) {
      wanted.add(c)
      DEPENDS_ON[c].forEach(add)
    }
  }
  requested.forEach(add)
  return CHECK_NAMES.filter(c => wanted.has(c))
}

/** Cost in tokens of running `checks` on one address. */
export function costOf(checks: readonly CheckName[]): number {
  return checks.reduce((sum, c) => sum + CHECK_COSTS[c], 0)
}
