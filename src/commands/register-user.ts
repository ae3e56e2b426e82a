import { createRequire } from 'node:module'
import { DomainError } from '../domain/shared.ts'
import { isLocale } from '../domain/locales.ts'
import * as user from '../domain/user/decider.ts'
import * as claim from '../domain/claim/decider.ts'
import { hashPassword, hmacHex, sixDigitCode } from '../lib/crypto/hashing.ts'
import { parseAddress } from '../verifier/syntax.ts'
import { isDisposableDomain } from '../verifier/lists.ts'
import { type CommandContext } from './context.ts'
import { handle, load } from './command-handler.ts'
import { emailClaimStream } from './email-index.ts'

/** Lifetime of a confirmation code, seconds. */
export const CONFIRMATION_CODE_TTL_S = 30 * 60
/** Password length bounds (OWASP ASVS 5.0 §6.2: at least 8, at least 64 allowed). */
export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 128

/** HMAC of a confirmation code bound to its account, so a hash cannot be brute-forced offline. */
export function confirmationCodeHash (ctx: CommandContext, userUuid: string, code: string): string {
  return hmacHex(ctx.secrets.code_key, `confirm:${userUuid}:${code}`)
}

/** What sign-up screening says of an address (interface: signup-preview). */
export interface Screening {
  may_sign_up: boolean
  refusal: 'disposable_email' | 'undeliverable_email' | null
  verdict: string | null
  reason: string | null
  did_you_mean: string | null
  checks: Array<{ name: string, outcome: string }>
}

/**
 * Screens an address for sign-up with the verification engine (syntax, typo, disposable,
 * DNS and SMTP): disposable → refused; a firm `invalid` verdict (no such domain, no mail
 * server, no such mailbox) → refused as undeliverable; `unknown` (the check could not
 * tell, e.g. port 25 blocked) is let through.
 */
export async function screenForSignUp (ctx: CommandContext, email: string): Promise<Screening> {
  const parsed = parseAddress(email)
  if (!parsed.ok) return { may_sign_up: false, refusal: 'undeliverable_email', verdict: 'invalid', reason: 'invalid_syntax', did_you_mean: null, checks: [{ name: 'syntax', outcome: 'fail' }] }
  if (isDisposableDomain(parsed.ascii_domain)) return { may_sign_up: false, refusal: 'disposable_email', verdict: 'risky', reason: 'disposable', did_you_mean: null, checks: [{ name: 'syntax', outcome: 'pass' }, { name: 'disposable', outcome: 'fail' }] }
  if (!ctx.screen) return { may_sign_up: true, refusal: null, verdict: null, reason: null, did_you_mean: null, checks: [{ name: 'syntax', outcome: 'pass' }, { name: 'disposable', outcome: 'pass' }] }
  const r = await ctx.screen(parsed.normalized)
  const refused = r.verdict === 'invalid'
  return { may_sign_up: !refused, refusal: refused ? 'undeliverable_email' : null, verdict: r.verdict, reason: r.reason, did_you_mean: r.did_you_mean, checks: r.checks.map(c => ({ name: c.name, outcome: c.outcome })) }
}

/**
 * Checks the password policy: 8 to 128 characters, not a common password (a list drawn
 * from breach corpora), and none of the context-specific words (ASVS 5.0 V6.2.11): the
 * service's names (SERVICE_WORDS) and the parts of the account's own address (`words`,
 * see `addressWords`). Words are matched in the password lower-cased, without spaces or
 * punctuation; words shorter than 4 characters are not used (they would refuse too much).
 * @throws DomainError invalid `<operation>.invalid_password`, `<operation>.common_password`,
 *   `<operation>.context_password`.
 */
export function assertPasswordPolicy (operation: string, password: string, words: readonly string[] = []): void {
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
    throw new DomainError('invalid', `${operation}.context_password`, 'the password contains the name of this service or a part of your address, which are guessed first; choose another')
  }
}

/** Lower-cased letters and digits only (how context words are compared). */
const fold = (s: string): string => s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]/gu, '')

/**
 * The documented list of context-specific words no password may contain (ASVS 5.0
 * V6.1.2): the service's and product's names as users see them (mail sender, OpenAPI
 * title, TOTP issuer).
 */
export const SERVICE_WORDS: readonly string[] = ['email verification', 'emailverifier', 'verifyemail', 'mailverify']

/**
 * The parts of an address a password of its account may not contain: the local part and
 * the domain's labels but its top-level one (`jane.doe@acme-corp.co.uk` → `jane.doe`,
 * `jane`, `doe`, `acme-corp`, `acme`, `corp`, `co`).
 */
export function addressWords (address: string): string[] {
  const at = address.lastIndexOf('@')
  if (at < 0) return []
  const local = address.slice(0, at)
  const labels = address.slice(at + 1).toLowerCase().split('.').slice(0, -1)
  return [...new Set([local, ...local.split(/[.+_-]/), ...labels, ...labels.flatMap(l => l.split('-'))])].filter(w => w.length > 0)
}

// ~49,000 most common passwords (zxcvbn's list, shipped as a library): refused at any
// length, as OWASP ASVS 5.0 §6.2.4 asks. No composition rules (§6.2.5).
const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  (createRequire(import.meta.url)('@zxcvbn-ts/language-common') as { dictionary: Record<string, string[]> }).dictionary['passwords-common']
)

/**
 * POST /api/auth/register (interface "Authentication and sign-in"): validates the address,
 * password and locale, claims the address (`user_email-<hmac>`, expected revision
 * `no_stream`), appends UserRegistered with the address sealed and a ConfirmationCodeIssued
 * that the mailer sends. An unconfirmed address registered again gets RegistrationRenewed
 * (the new password; earlier codes void) and a new code (ASVS 5.0 V6.4: no account takeover
 * by registering someone's address first). When the address belongs to a confirmed account
 * nothing is appended and the caller sees the same outcome (the password is hashed either
 * way, for equal timing).
 * @throws DomainError invalid `register_user.invalid_email`, `register_user.invalid_password`,
 *   `register_user.invalid_locale`, `register_user.disposable_email`.
 */
export async function registerUser (ctx: CommandContext, input: { email: string, password: string, locale: string }): Promise<void> {
  await completeRegistration(ctx, { ...input, email: await checkRegistration(ctx, input) })
}

/**
 * The checks of a registration that do not depend on whether the address has an account:
 * the address, the password policy, the locale and sign-up screening (the route answers
 * after these, and does the rest after the answer: nothing in its timing tells whether the
 * address is registered).
 * @returns the normalized address.
 * @throws DomainError as `registerUser`.
 */
export async function checkRegistration (ctx: CommandContext, input: { email: string, password: string, locale: string }): Promise<string> {
  const parsed = parseAddress(input.email)
  if (!parsed.ok) throw new DomainError('invalid', 'register_user.invalid_email', `invalid email: ${parsed.detail}`)
  assertPasswordPolicy('register_user', input.password, addressWords(parsed.normalized))
  if (!isLocale(input.locale)) throw new DomainError('invalid', 'register_user.invalid_locale', `unsupported locale "${input.locale}"`)
  const screening = await screenForSignUp(ctx, parsed.normalized)
  if (!screening.may_sign_up) throw new DomainError('invalid', `register_user.${screening.refusal}`, screening.refusal === 'disposable_email' ? 'disposable addresses cannot sign up' : 'mail to this address cannot be delivered')
  return parsed.normalized
}

/** The account-dependent part of a registration, for a checked address (`checkRegistration`). */
export async function completeRegistration (ctx: CommandContext, input: { email: string, password: string, locale: string }): Promise<void> {
  const parsed = parseAddress(input.email)
  if (!parsed.ok) throw new DomainError('invalid', 'register_user.invalid_email', `invalid email: ${parsed.detail}`)
  const passwordHash = await hashPassword(input.password)
  const now = ctx.now().toISOString()
  const claimStream = emailClaimStream(ctx, parsed.normalized)
  const candidate = ctx.newId()
  const claimed = await handle(ctx, claimStream, claim, { type: 'ClaimValue', data: { owner_uuid: candidate, now } })
  const owner = claimed.state.owner_uuid!
  // The address belongs to a confirmed (or deleted) account: say nothing, change nothing.
  const existing = await load(ctx, `user-${owner}`, user)
  if (existing.state.status === 'confirmed' || existing.state.status === 'deleted') return

  // A new claim, one left without its account by an interrupted registration, or an
  // unconfirmed account registered again: this password replaces the earlier one (whoever
  // registered first never holds the owner's account) and a new code is mailed.
  const code = sixDigitCode()
  const email = await ctx.sealer.seal(owner, parsed.normalized)
  const codeSealed = await ctx.sealer.seal(owner, code)
  const expiresAt = new Date(ctx.now().getTime() + CONFIRMATION_CODE_TTL_S * 1000).toISOString()
  await handle(ctx, `user-${owner}`, user, {
    type: 'RegisterUser',
    data: { user_uuid: owner, email_sealed: email, password_hash: passwordHash, locale: input.locale, code_hash: confirmationCodeHash(ctx, owner, code), code_sealed: codeSealed, code_expires_at: expiresAt, now }
  }, { actor: owner }).catch(err => {
    // A concurrent registration of the same address won the race: same silent outcome.
    if (err instanceof DomainError && err.code === 'register_user.already_registered') return
    throw err
  })
}
