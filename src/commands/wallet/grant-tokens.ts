import { DomainError } from '../../domain/shared.ts'
import type { CommandContext } from '../context.ts'
import { grantToWallet } from './shared/grant.ts'
import { requireAccount } from '../user/read.ts'

/**
 * Operator credit (`svc wallet grant`): appends TokensGranted with source `operator`,
 * the reason and the operator as actor, to the wallet of the account holding `email`.
 * @throws DomainError not_found `account.not_found`; invalid `wallet.invalid_amount`,
 *   `grant_tokens.reason_required`.
 */
export async function grantTokens(
  ctx: CommandContext,
  input: { email: string; tokens: number; reason: string; operator: string }
): Promise<{ user_uuid: string; grant_uuid: string; balance: number }> {
  if (input.reason.trim().length === 0) throw new DomainError('invalid', 'grant_tokens.reason_required', 'a reason is required for the audit trail')
  const owner = await requireAccount(ctx, input.email)
  const grantUuid = ctx.newId()
  const r = await grantToWallet(
    ctx,
    { user_uuid: owner, grant_uuid: grantUuid, amount: input.tokens, source: 'operator', plan: null, reason: input.reason.trim() },
    `operator:${input.operator}`
  )
  return { user_uuid: owner, grant_uuid: grantUuid, balance: r.state.balance }
}
