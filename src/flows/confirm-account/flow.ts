import type { Flow } from '../../eventsourcing/flow.ts'
import { freePlan } from '../../domain/plans.ts'
import type { CommandContext } from '../../commands/context.ts'
import { grantPlanTokens } from '../../commands/wallet/shared/grant.ts'
import { wallets } from '../../commands/wallet/aggregate.ts'
import { users } from '../../commands/user/aggregate.ts'
import { react, type GrantCommand, type GrantState } from './react.ts'

/**
 * The Free plan's grant follows a confirmation (a process killed
 * after `UserConfirmed` left the account without its 1,000 tokens, and nothing repaired
 * it). Trigger: UserConfirmed. Step `grant`: GrantTokens on `wallet-<user>`, idempotent by
 * its grant id `plan-<free>-initial`. Bound: a minute after the confirmation. State read:
 * the wallet (from its latest books closed) and the account.
 */
export const confirmAccountFlow: Flow<CommandContext, GrantState, GrantCommand> = {
  name: 'confirm-account',
  prefix: 'confirm',
  triggers: ['UserConfirmed'],
  steps: ['grant'],
  bound_ms: 60_000,
  load: async (ctx, trigger) => {
    const owner = String(trigger.data.user_uuid)
    const free = freePlan(ctx.config.plans)
    const grant = { grant_uuid: `plan-${free.code}-initial`, amount: free.tokens_per_month, plan: free.code, reason: `${free.name} plan` }
    const [wallet, account] = await Promise.all([wallets.load(ctx, owner), users.load(ctx, owner)])
    return { grant, granted: wallet.state.recent_grants.includes(grant.grant_uuid), deleted: account.state.status === 'deleted' }
  },
  react,
  execute: async (ctx, step, meta) => {
    await grantPlanTokens(ctx, step.command, meta.actor ?? step.command.user_uuid)
  }
}
