import { createRequire } from 'node:module'
import { DomainError } from '../../../domain/shared.ts'

/** Password length bounds (OWASP ASVS 5.0 §6.2: at least 8, at least 64 allowed). */
const PASSWORD_MIN = 8

const PASSWORD_MAX = 128

/**
 * Checks the password policy: 8 to 128 characters, not a common password (a list drawn
 * from breach corpora), and none of the context-specific words (ASVS 5.0 V6.2.11): the
 * service's names (SERVICE_WORDS) and the parts of the account's own address (`words`,
 * see `addressWords`). Words are matched in the password lower-cased, without spaces or
 * punctuation; words shorter than 4 characters are not used (they would refuse too much).
 * @throws DomainError invalid `<operation>.invalid_password`, `<operation>.common_password`,
 *   `<operation>.context_password`.
 */
export function assertPasswordPolicy(operation: string, password: string, words: readonly string[] = []): void {
  const length = [...password].length
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw new DomainError('invalid', `${operation}.invalid_password`, `password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters long`)
  }
  if (COMMON_PASSWORDS.has(password.toLowerCase())) {
    throw new DomainError('invalid', `${operation}.common_password`, 'this password is among the most common ones and would be guessed first; choose another')
  }
  const folded = fold(password)
  const word = [...SERVICE_WORDS, ...words].map(fold).find(w => w.length >= 4 && folded.includes(w))
  if (word !== undefined) {
    throw new DomainError(
      'invalid',
      `${operation}.context_password`,
      'the password contains the name of this service or a part of your address, which are guessed first; choose another'
    )
  }
}

/** Lower-cased letters and digits only (how context words are compared). */
const fold = (s: string): string =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '')

/**
 * The documented list of context-specific words no password may contain (ASVS 5.0
 * V6.1.2): the service's and product's names as users see them (mail sender, OpenAPI
 * title, TOTP issuer).
 */
const SERVICE_WORDS: readonly string[] = ['email verification', 'emailverifier', 'verifyemail', 'mailverify']

/**
 * The parts of an address a password of its account may not contain: the local part and
 * the domain's labels but its top-level one (`jane.doe@acme-corp.co.uk` → `jane.doe`,
 * `jane`, `doe`, `acme-corp`, `acme`, `corp`, `co`).
 */
export function addressWords(address: string): string[] {
  const at = address.lastIndexOf('@')
  if (at < 0) return []
  const local = address.slice(0, at)
  const labels = address
    .slice(at + 1)
    .toLowerCase()
    .split('.')
    .slice(0, -1)
  return [...new Set([local, ...local.split(/[.+_-]/), ...labels, ...labels.flatMap(l => l.split('-'))])].filter(w => w.length > 0)
}

// length, as OWASP ASVS 5.0 §6.2.4 asks. No composition rules (§6.2.5).
const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  (createRequire(import.meta.url)('@zxcvbn-ts/language-common') as { dictionary: Record<string, string[]> }).dictionary['passwords-common']
)
