import { DomainError } from '../../domain/shared.ts'
import { freePlan } from '../../domain/plans.ts'
import type { CommandContext } from '../context.ts'
import { grantToWallet } from '../wallet/grant.ts'
import { accountOfEmail } from './email-claims.ts'
import { confirmationCodeHash } from './confirmation-code.ts'
import { startSession, type ClientSeen, type SignedIn } from '../session/start-session.ts'
import { users } from './aggregate.ts'

const invalidCode = (): DomainError =>
  new DomainError('unauthorized', 'confirm_account.invalid_code', 'the code is wrong, expired or used up; ask for a new one')

/**
 * POST /api/auth/confirm: checks the six-digit code (at most MAX_CONFIRMATION_ATTEMPTS
 * wrong tries per code, within its lifetime), confirms the account, grants the Free plan's
 * tokens on `wallet-<user>` (once: the grant id is fixed per account) and signs the user in.
 * @throws DomainError unauthorized `confirm_account.invalid_code` for any failure, so the
 *   answer does not tell whether the address is registered.
 */
export async function confirmAccount(ctx: CommandContext, input: { email: string; code: string }, client: ClientSeen | null = null): Promise<SignedIn> {
  const owner = await accountOfEmail(ctx, input.email)
  if (!owner || !/^\d{6}$/.test(input.code)) throw invalidCode()
  const candidate = confirmationCodeHash(ctx, owner, input.code)
  const now = ctx.now().toISOString()
  const r = await users.handle(ctx, owner, { type: 'ConfirmUser', data: { code_hash: candidate, now } }, { actor: owner })
  if (r.state.status !== 'confirmed' || !r.events.some(e => e.type === 'UserConfirmed')) throw invalidCode()
  const granted = await grantPlanTokens(ctx, owner)
  const signedIn = await startSession(ctx, owner, 'confirmation', { client })
  return { ...signedIn, position: Math.max(signedIn.position, granted) }
}

/** Grants the Free plan's tokens once per account; returns the wallet's head position. */
async function grantPlanTokens(ctx: CommandContext, owner: string): Promise<number> {
  const free = freePlan(ctx.config.plans)
  const r = await grantToWallet(
    ctx,
    {
      user_uuid: owner,
      grant_uuid: `plan-${free.code}-initial`,
      amount: free.tokens_per_month,
      source: 'plan',
      plan: free.code,
      reason: `${free.name} plan`
    },
    owner
  )
  return r.position
}
