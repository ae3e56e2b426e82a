import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

// Maintained lists shipped as libraries (docs/design/verification.md check 3), never copied here.
const disposable = new Set<string>(require('disposable-email-domains') as string[])
const disposableWildcards = new Set<string>(require('disposable-email-domains/wildcard.json') as string[])
const free = new Set<string>(require('email-providers/all.json') as string[])
/**
 * Entries of `role-based-email-addresses` that are common given names, so that a person's
 * address (`alexa@`, `sydney@`) is not called a role account (a `risky` verdict). Checked
 * against the package's list (3.1.0, 1018 entries): Alexa, Sydney and Paris are common
 * English given names (the list has them as Amazon's assistant and office-city aliases),
 * Per is a common Scandinavian given name, Alla a common Russian and Ukrainian one. `dev`
 * stays a role: it is a given name in South Asia, but far more often a team alias.
 */
const GIVEN_NAMES_NOT_ROLES: ReadonlySet<string> = new Set(['alexa', 'sydney', 'paris', 'per', 'alla'])
const roles = new Set<string>((require('role-based-email-addresses') as string[]).map(r => r.toLowerCase()).filter(r => !GIVEN_NAMES_NOT_ROLES.has(r)))

/** Whether `domain` (ASCII, lower case) or a parent of it is a disposable-mail domain. */
export function isDisposableDomain(domain: string): boolean {
  if (disposable.has(domain)) return true
  const labels = domain.split('.')
  for (let i = 1; i < labels.length - 1; i++) {
    if (disposableWildcards.has(labels.slice(i).join('.'))) return true
  }
  return disposableWildcards.has(domain)
}

/** Whether `domain` belongs to a free mailbox provider (gmail.com, yahoo.co.uk, …). */
export function isFreeDomain(domain: string): boolean {
  return free.has(domain)
}

/**
 * Whether the local part names a role (admin, info, sales, …) rather than a person.
 * Sub-addressing (`+tag`) is ignored and separators are tolerated (`no-reply`, `no_reply`).
 * Common given names of the list are not roles (`GIVEN_NAMES_NOT_ROLES`).
 */
export function isRoleLocalPart(local: string): boolean {
  const base = local.toLowerCase().split('+')[0]
  return roles.has(base) || roles.has(base.replaceAll('_', '-')) || roles.has(base.replaceAll(/[-_.]/g, ''))
}
