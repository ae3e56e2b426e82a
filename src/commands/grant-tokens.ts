import { DomainError } from '../domain/shared.ts'
import * as wallet from '../domain/wallet/decider.ts'
import * as user from '../domain/user/decider.ts'
import { handle, load, type CommandContext } from './context.ts'
import { accountOfEmail } from './email-index.ts'

/**
 * Operator credit (`svc wallet grant`): appends TokensGranted with source `operator`,
 * the reason and the operator as actor, to the wallet of the account holding `email`.
 * @throws DomainError not_found `grant_tokens.no_account`; invalid `wallet.invalid_amount`,
 *   `grant_tokens.reason_required`.
 */
export async function grantTokens (ctx: CommandContext, input: { email: string, tokens: number, reason: string, operator: string }): Promise<{ user_uuid: string, grant_uuid: string, balance: number }> {
  if (input.reason.trim().length === 0) throw new DomainError('invalid', 'grant_tokens.reason_required', 'a reason is required for the audit trail')
  const owner = await accountOfEmail(ctx, input.email)
  const account = owner ? (await load(ctx, `user-${owner}`, user)).state : null
  if (!owner || !account || account.status === 'none') throw new DomainError('not_found', 'grant_tokens.no_account', 'no account with that email')
  const grantUuid = ctx.newId()
  const r = await handle(ctx, `wallet-${owner}`, wallet, {
    type: 'GrantTokens',
    data: { user_uuid: owner, grant_uuid: grantUuid, amount: input.tokens, source: 'operator', plan: null, reason: input.reason.trim(), now: ctx.now().toISOString() }
  }, { actor: `operator:${input.operator}` })
  return { user_uuid: owner, grant_uuid: grantUuid, balance: r.state.balance }
}
