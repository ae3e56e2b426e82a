import { DomainError } from '../domain/shared.ts'
import * as user from '../domain/user/decider.ts'
import * as claim from '../domain/claim/decider.ts'
import { sha256Hex, verifyPassword } from '../lib/crypto/hashing.ts'
import { newOwnedToken, parseOwnedToken } from './owned-token.ts'
import { parseAddress } from '../verifier/syntax.ts'
import { type CommandContext } from './context.ts'
import { handle, load } from './command-handler.ts'
import { accountOfEmail, emailClaimStream } from './email-index.ts'
import { startPasswordCheck } from './password-check.ts'
import { factorOf } from './two-factor.ts'

/** Lifetime of an email-change link, seconds. */
export const EMAIL_CHANGE_TTL_S = 24 * 3_600

/**
 * PATCH /api/users/{uuid}/email: checks the password (and, with two-factor on, `code`: a
 * TOTP or backup code, ASVS 5.0 V7.5.1) and that the new address is free, then mails a
 * link (`token=<user uuid>.<secret>`, 24 h, only its hash kept) to the new address; the
 * account keeps its address until the link is opened.
 * @throws DomainError invalid `change_email.invalid_email`, `change_email.wrong_password`,
 *   `change_email.second_factor_required`, `change_email.invalid_code`; conflict
 *   `change_email.email_taken`; not_found `change_email.not_found`; locked `change_email.locked`.
 */
export async function requestEmailChange (ctx: CommandContext, owner: string, input: { new_email: string, current_password: string, code?: string }): Promise<void> {
  const parsed = parseAddress(input.new_email)
  if (!parsed.ok) throw new DomainError('invalid', 'change_email.invalid_email', `invalid email: ${parsed.detail}`)
  const { state } = await load(ctx, `user-${owner}`, user)
  if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'change_email.not_found', 'no such user')
  await startPasswordCheck(ctx, owner, 'change_email')
  const [passwordOk, factor] = await Promise.all([verifyPassword(state.password_hash, input.current_password), factorOf(ctx, state, input.code)])
  if (passwordOk && await accountOfEmail(ctx, parsed.normalized) !== null) throw new DomainError('conflict', 'change_email.email_taken', 'this address belongs to another account')
  const { token: link, secret } = newOwnedToken(owner)
  const now = ctx.now()
  const [newEmail, token] = await Promise.all([ctx.sealer.seal(owner, parsed.normalized), ctx.sealer.seal(owner, link)])
  const r = await handle(ctx, `user-${owner}`, user, {
    type: 'RequestEmailChange',
    data: { password_ok: passwordOk, for_password_hash: state.password_hash, new_email_sealed: newEmail, token_hash: sha256Hex(secret), token_sealed: token, expires_at: new Date(now.getTime() + EMAIL_CHANGE_TTL_S * 1000).toISOString(), factor, now: now.toISOString() }
  }, { actor: owner })
  if (user.refusedSecondFactor(r.events)) throw new DomainError('invalid', 'change_email.invalid_code', 'the code is wrong or was already used')
}

/**
 * POST /api/auth/verify-email-change: claims the new address for the account (its claim
 * stream, decided with its expected revision), switches the account to it (the user
 * decider checks the link again) and releases the old one. Each step is idempotent: a
 * link opened again after an interruption finishes the change.
 * @throws DomainError unauthorized `verify_email_change.invalid_token`; conflict
 *   `verify_email_change.email_taken` when the address was taken meanwhile.
 * @returns the global position of the last event appended.
 */
export async function verifyEmailChange (ctx: CommandContext, token: string): Promise<number> {
  const invalid = (): DomainError => new DomainError('unauthorized', 'verify_email_change.invalid_token', 'the link is invalid or expired')
  const parsed = parseOwnedToken(token)
  if (!parsed) throw invalid()
  const { owner, secret } = parsed
  const { state } = await load(ctx, `user-${owner}`, user)
  const now = ctx.now().toISOString()
  if (state.status === 'none' || state.status === 'deleted' || !state.email_change) throw invalid()
  const [newEmail, oldEmail] = await Promise.all([ctx.sealer.unseal(owner, state.email_change.new_email), ctx.sealer.unseal(owner, state.email)])
  if (newEmail === null || oldEmail === null) throw invalid()
  // The link is checked by the decider below; checking it first keeps a wrong link from claiming anything.
  if (!user.sameHash(state.email_change.hash, sha256Hex(secret)) || now >= state.email_change.expires_at) throw invalid()
  const claimed = await handle(ctx, emailClaimStream(ctx, newEmail), claim, { type: 'ClaimValue', data: { owner_uuid: owner, now } }, { actor: owner })
  if (claimed.state.owner_uuid !== owner) throw new DomainError('conflict', 'verify_email_change.email_taken', 'this address was taken by another account meanwhile')
  const changed = await handle(ctx, `user-${owner}`, user, { type: 'ChangeEmail', data: { token_hash: sha256Hex(secret), now } }, { actor: owner })
  await handle(ctx, emailClaimStream(ctx, oldEmail), claim, { type: 'ReleaseValue', data: { owner_uuid: owner, now } }, { actor: owner })
  return changed.position
}
