import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
// mailcheck's successor (Sift3 distance against popular mailbox domains and TLDs).
const spell = require('@zootools/email-spell-checker') as {
  run: (o: { email: string; domains?: string[]; topLevelDomains?: string[]; secondLevelDomains?: string[] }) => { full: string } | undefined
  POPULAR_DOMAINS: string[]
  POPULAR_TLDS: string[]
}

// Bare "co" is left out of the candidate TLDs: "hotmail.co" is far more often a typo of
// ".com" than a real address (mailcheck's defaults make the same choice).
const TLDS = spell.POPULAR_TLDS.filter(t => t !== 'co')

/**
 * The `typo` check (docs/design/verification.md check 2): a suggested correction of the domain
 * against common mailbox providers (`jane@gmial.com` → `jane@gmail.com`), or null when
 * the address looks right or is too far from every known domain.
 */
export function suggestCorrection(input: string): string | null {
  const email = input.trim()
  const at = email.lastIndexOf('@')
  if (at <= 0 || at === email.length - 1) return null
  const domain = email.slice(at + 1).toLowerCase()
  let proposed = memo.get(domain)
  if (proposed === undefined) {
    proposed = suggestDomain(domain)
    if (memo.size >= 50_000) memo.clear()
    memo.set(domain, proposed)
  }
  return proposed === null ? null : `${email.slice(0, at)}@${proposed}`
}

const memo = new Map<string, string | null>()

function suggestDomain(domain: string): string | null {
  const suggestion = spell.run({ email: `x@${domain}`, topLevelDomains: TLDS })
  if (!suggestion) return null
  const proposed = suggestion.full.slice(suggestion.full.lastIndexOf('@') + 1)
  if (proposed === domain) return null
  // Sift3 alone proposes far-fetched fixes (acme.com → me.com): keep only the ones a
  // slip of the finger explains, one edit for short domains and two for long ones.
  if (editDistance(domain, proposed) > (domain.length >= 9 ? 2 : 1)) return null
  return proposed
}

/** Optimal-string-alignment distance: insertions, deletions, substitutions, adjacent transpositions. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  return d[a.length][b.length]
}
