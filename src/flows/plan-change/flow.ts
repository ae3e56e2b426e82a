import type { Flow } from '../../eventsourcing/flow.ts'
import { findPlan, tokensPerInvoice, type Cycle } from '../../domain/plans.ts'
import type { Subscription } from '../../domain/subscription/events.ts'
import type { CommandContext } from '../../commands/context.ts'
import { grantPlanTokens } from '../../commands/wallet/shared/grant.ts'
import { wallets } from '../../commands/wallet/aggregate.ts'
import { react, type PlanGrantCommand, type PlanGrantState } from './react.ts'

/**
 * An operator's plan change grants the new period's tokens from its committed event (issue
 * "Nothing lost": the grant was made inline after the change with a fresh id, so a crash
 * between lost it, and running `svc subscription set` again changed nothing — the account
 * was already on that plan). Triggers: PlanStarted, PlanChanged (with `grant_period`).
 * Step `grant`: GrantTokens on `wallet-<user>`, idempotent by its grant id
 * `operator-<event id>`. Bound: a minute. State read: the wallet (from its latest books
 * closed) and the plan catalogue.
 */
export const planGrantFlow: Flow<CommandContext, PlanGrantState, PlanGrantCommand> = {
  name: 'plan-grant',
  prefix: 'plan',
  triggers: ['PlanStarted', 'PlanChanged'],
  steps: ['grant'],
  bound_ms: 60_000,
  load: async (ctx, trigger) => {
    if (trigger.data.grant_period !== true) return { grant: null, granted: false }
    const owner = String(trigger.data.user_uuid)
    const sub = trigger.data.subscription as Subscription
    const plan = findPlan(ctx.config.plans, sub.plan)
    if (!plan) return { grant: null, granted: false }
    const cycle = sub.cycle as Cycle
    const grant = { grant_uuid: `operator-${trigger.id}`, amount: tokensPerInvoice(plan, cycle), plan: plan.code, reason: `${plan.name} plan (${cycle})` }
    const wallet = await wallets.load(ctx, owner)
    return { grant, granted: wallet.state.recent_grants.includes(grant.grant_uuid) }
  },
  react,
  execute: async (ctx, step, meta) => {
    await grantPlanTokens(ctx, step.command, meta.actor ?? 'operator')
  }
}
