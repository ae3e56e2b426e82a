import { DomainError } from '../../domain/shared.ts'
import { isLocale } from '../../domain/locales.ts'
import * as claim from '../../domain/claim/decider.ts'
import { hashPassword, sixDigitCode } from '../../lib/crypto/hashing.ts'
import { parseAddress } from '../../verifier/syntax.ts'
import type { CommandContext } from '../context.ts'
import { handle } from '../../eventsourcing/command-handler.ts'
import { emailClaimStream } from './shared/email-claims.ts'
import { CONFIRMATION_CODE_TTL_S, confirmationCodeHash } from './shared/confirmation-code.ts'
import { signupPreview } from './signup-preview.ts'
import { assertPasswordPolicy, addressWords } from './shared/password-policy.ts'
import { users } from './aggregate.ts'

// ~49,000 most common passwords (zxcvbn's list, shipped as a library): refused at any

/*
 * Registration runs in two phases, `checkRegistration` then `registerUser`.
 * POST /api/auth/register (interface "Authentication and sign-in"): validates the address,
 * password and locale, claims the address (`user_email-<hmac>`, expected revision
 * `no_stream`), appends UserRegistered with the address sealed and a ConfirmationCodeIssued
 * that the mailer sends. An unconfirmed address registered again gets RegistrationRenewed
 * (the new password; earlier codes void) and a new code (ASVS 5.0 V6.4: no account takeover
 * by registering someone's address first). When the address belongs to a confirmed account
 * nothing is appended and the caller sees the same outcome (the password is hashed either
 * way, for equal timing).
 * Throws DomainError invalid `register_user.invalid_email`, `register_user.invalid_password`,
 *   `register_user.invalid_locale`, `register_user.disposable_email`.
 */

/**
 * The checks of a registration that do not depend on whether the address has an account:
 * the address, the password policy, the locale and sign-up screening (the route answers
 * after these, and does the rest after the answer: nothing in its timing tells whether the
 * address is registered).
 * @returns the normalized address.
 * @throws DomainError as above.
 */
export async function checkRegistration(ctx: CommandContext, input: { email: string; password: string; locale: string }): Promise<string> {
  const parsed = parseAddress(input.email)
  if (!parsed.ok) throw new DomainError('invalid', 'register_user.invalid_email', `invalid email: ${parsed.detail}`)
  assertPasswordPolicy('register_user', input.password, addressWords(parsed.normalized))
  if (!isLocale(input.locale)) throw new DomainError('invalid', 'register_user.invalid_locale', `unsupported locale "${input.locale}"`)
  const screening = await signupPreview(ctx, parsed.normalized)
  if (!screening.may_sign_up)
    throw new DomainError(
      'invalid',
      `register_user.${screening.refusal}`,
      screening.refusal === 'disposable_email' ? 'disposable addresses cannot sign up' : 'mail to this address cannot be delivered'
    )
  return parsed.normalized
}

/** The account-dependent part of a registration, for a checked address (`checkRegistration`). */
export async function registerUser(ctx: CommandContext, input: { email: string; password: string; locale: string }): Promise<void> {
  const parsed = parseAddress(input.email)
  if (!parsed.ok) throw new DomainError('invalid', 'register_user.invalid_email', `invalid email: ${parsed.detail}`)
  const passwordHash = await hashPassword(input.password)
  const now = ctx.now().toISOString()
  const claimStream = emailClaimStream(ctx, parsed.normalized)
  const candidate = ctx.newId()
  const claimed = await handle(ctx, claimStream, claim, { type: 'ClaimValue', data: { owner_uuid: candidate, now } })
  const owner = claimed.state.owner_uuid!
  // The address belongs to a confirmed (or deleted) account: say nothing, change nothing.
  const existing = await users.load(ctx, owner)
  if (existing.state.status === 'confirmed' || existing.state.status === 'deleted') return

  // A new claim, one left without its account by an interrupted registration, or an
  // unconfirmed account registered again: this password replaces the earlier one (whoever
  // registered first never holds the owner's account) and a new code is mailed.
  const code = sixDigitCode()
  const email = await ctx.sealer.seal(owner, parsed.normalized)
  const codeSealed = await ctx.sealer.seal(owner, code)
  const expiresAt = new Date(ctx.now().getTime() + CONFIRMATION_CODE_TTL_S * 1000).toISOString()
  await users
    .handle(
      ctx,
      owner,
      {
        type: 'RegisterUser',
        data: {
          user_uuid: owner,
          email_sealed: email,
          password_hash: passwordHash,
          locale: input.locale,
          code_hash: confirmationCodeHash(ctx, owner, code),
          code_sealed: codeSealed,
          code_expires_at: expiresAt,
          now
        }
      },
      { actor: owner }
    )
    .catch(err => {
      // A concurrent registration of the same address won the race: same silent outcome.
      if (err instanceof DomainError && err.code === 'register_user.already_registered') return
      throw err
    })
}
