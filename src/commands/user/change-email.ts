import { DomainError } from '../../domain/shared.ts'
import * as user from '../../domain/user/decider.ts'
import { sha256Hex, verifyPassword } from '../../lib/crypto/hashing.ts'
import { newOwnedToken } from '../owned-token.ts'
import { parseAddress } from '../../verifier/syntax.ts'
import type { CommandContext } from '../context.ts'
import { accountOfEmail } from './read.ts'
import { startPasswordCheck } from './start-password-check.ts'
import { factorOf } from './shared/second-factor.ts'
import { users } from './aggregate.ts'

/** Lifetime of an email-change link, seconds. */
const EMAIL_CHANGE_TTL_S = 24 * 3_600

/**
 * PATCH /api/users/{uuid}/email: checks the password (and, with two-factor on, `code`: a
 * TOTP or backup code, ASVS 5.0 V7.5.1) and that the new address is free, then mails a
 * link (`token=<user uuid>.<secret>`, 24 h, only its hash kept) to the new address; the
 * account keeps its address until the link is opened.
 * @throws DomainError invalid `change_email.invalid_email`, `change_email.wrong_password`,
 *   `change_email.second_factor_required`, `change_email.invalid_code`; conflict
 *   `change_email.email_taken`; not_found `change_email.not_found`; locked `change_email.locked`.
 */
export async function changeEmail(ctx: CommandContext, owner: string, input: { new_email: string; current_password: string; code?: string }): Promise<void> {
  const parsed = parseAddress(input.new_email)
  if (!parsed.ok) throw new DomainError('invalid', 'change_email.invalid_email', `invalid email: ${parsed.detail}`)
  const { state } = await users.load(ctx, owner)
  if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'change_email.not_found', 'no such user')
  await startPasswordCheck(ctx, owner, 'change_email')
  const [passwordOk, factor] = await Promise.all([verifyPassword(state.password_hash, input.current_password), factorOf(ctx, state, input.code)])
  if (passwordOk && (await accountOfEmail(ctx, parsed.normalized)) !== null)
    throw new DomainError('conflict', 'change_email.email_taken', 'this address belongs to another account')
  const { token: link, secret } = newOwnedToken(owner)
  const now = ctx.now()
  const [newEmail, token] = await Promise.all([ctx.sealer.seal(owner, parsed.normalized), ctx.sealer.seal(owner, link)])
  const r = await users.handle(
    ctx,
    owner,
    {
      type: 'ChangeEmail',
      data: {
        password_ok: passwordOk,
        for_password_hash: state.password_hash,
        new_email_sealed: newEmail,
        token_hash: sha256Hex(secret),
        token_sealed: token,
        expires_at: new Date(now.getTime() + EMAIL_CHANGE_TTL_S * 1000).toISOString(),
        factor,
        now: now.toISOString()
      }
    },
    { actor: owner }
  )
  if (user.refusedSecondFactor(r.events)) throw new DomainError('invalid', 'change_email.invalid_code', 'the code is wrong or was already used')
}
