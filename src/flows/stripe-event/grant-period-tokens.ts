import { tokensPerInvoice, type Cycle, type Plan } from '../../domain/plans.ts'
import type { CommandContext } from '../../commands/context.ts'
import { grantToWallet } from '../../commands/wallet/shared/grant.ts'

/**
 * Grants a plan's tokens for one paid period, once per `grant_uuid` (a Stripe invoice id,
 * or an operator's change). @returns the wallet's position.
 */
export async function grantPeriodTokens(
  ctx: CommandContext,
  c: { user_uuid: string; plan: Plan; cycle: Cycle; grant_uuid: string; actor: string }
): Promise<number> {
  const r = await grantToWallet(
    ctx,
    {
      user_uuid: c.user_uuid,
      grant_uuid: c.grant_uuid,
      amount: tokensPerInvoice(c.plan, c.cycle),
      source: 'plan',
      plan: c.plan.code,
      reason: `${c.plan.name} plan (${c.cycle})`
    },
    c.actor
  )
  return r.position
}
