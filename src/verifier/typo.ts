import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
// mailcheck's successor (Sift3 distance against popular mailbox domains and TLDs).
const spell = require('@zootools/email-spell-checker') as {
  run: (o: { email: string, domains?: string[], topLevelDomains?: string[], secondLevelDomains?: string[] }) => { full: string } | undefined
  POPULAR_DOMAINS: string[]
  POPULAR_TLDS: string[]
}

// Bare "co" is left out of the candidate TLDs: "hotmail.co" is far more often a typo of
// ".com" than a real address (mailcheck's defaults make the same choice).
const TLDS = spell.POPULAR_TLDS.filter(t => t !== 'co')

/**
 * The `typo` check (VERIFICATION.md check 2): a suggested correction of the domain
 * against common mailbox providers (`jane@gmial.com` → `jane@gmail.com`), or null when
 * the address looks right or is too far from every known domain.
 */
export function suggestCorrection (email: string): string | null {
  const at = email.lastIndexOf('@')
  if (at <= 0 || at === email.length - 1) return null
  const suggestion = spell.run({ email, topLevelDomains: TLDS })
  if (!suggestion || suggestion.full === email) return null
  return suggestion.full
}
