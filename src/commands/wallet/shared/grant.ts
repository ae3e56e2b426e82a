import type * as wallet from '../../../domain/wallet/decider.ts'
import type { HandleResult } from '../../../eventsourcing/command-handler.ts'
import type { CommandContext } from '../../context.ts'
import type { WalletEvent } from '../../../domain/wallet/events.ts'
import { wallets } from '../aggregate.ts'

/** What a grant names: everything of GrantTokens but the time, which the context gives. */
export type Grant = Omit<Extract<wallet.WalletCommand, { type: 'GrantTokens' }>['data'], 'now'>

/**
 * Appends GrantTokens to the account's wallet (`wallet-<user_uuid>`): the one path of every
 * grant (the Free plan on confirmation, a paid period, a top-up, an operator's credit).
 * Idempotent by `grant_uuid` (the decider ignores a grant among its recent ones). Costs one
 * load of the wallet stream from its latest WalletBooksClosed (bounded by CLOSE_BOOKS_EVERY)
 * and one append.
 * @throws DomainError invalid `wallet.invalid_amount` for a non-positive or fractional amount.
 */
export async function grantToWallet(ctx: CommandContext, grant: Grant, actor: string): Promise<HandleResult<wallet.WalletState, WalletEvent>> {
  return await wallets.handle(ctx, grant.user_uuid, { type: 'GrantTokens', data: { ...grant, now: ctx.now().toISOString() } }, { actor })
}

/**
 * A plan's tokens granted (`source` plan): the Free plan's at confirmation, an operator's
 * period. As `grantToWallet`, idempotent by `grant_uuid`.
 */
export async function grantPlanTokens(
  ctx: CommandContext,
  c: Pick<Grant, 'user_uuid' | 'grant_uuid' | 'amount' | 'reason'> & { plan: string },
  actor: string
): Promise<HandleResult<wallet.WalletState, WalletEvent>> {
  return await grantToWallet(ctx, { user_uuid: c.user_uuid, grant_uuid: c.grant_uuid, amount: c.amount, source: 'plan', plan: c.plan, reason: c.reason }, actor)
}
