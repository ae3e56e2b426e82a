import { DomainError } from '../../domain/shared.ts'
import type { Subscription } from '../../domain/subscription/events.ts'
import { CYCLES, FREE, findPlan, tokensPerInvoice, type Cycle } from '../../domain/plans.ts'
import type { CommandContext } from '../../commands/context.ts'
import { loadSubscription } from '../../commands/subscription/read.ts'
import { requireAccount } from '../../commands/user/read.ts'
import { setPlan } from '../../commands/subscription/set-plan.ts'
import { endPlan } from '../../commands/subscription/end-plan.ts'
import { faultPoint } from '../../lib/faults.ts'
import { reactNow } from '../react-now.ts'
import { planGrantFlow } from './flow.ts'

/**
 * `svc subscription set --email --plan [--cycle] [--period-end] [--no-grant]`: what billing
 * appends, by hand: the plan starts, changes or ends (PlanStarted / PlanChanged / PlanEnded)
 * and, for a paid plan, one period's tokens are granted as an invoice would (unless `grant`
 * is false; flow `plan-grant`, from the change's event). Nothing changes when the account is
 * on that plan and cycle already. Fault points: `plan.after_change`, `plan.after_grant`.
 * @throws DomainError not_found `account.not_found`; invalid `subscription.unknown_plan`,
 *   `subscription.invalid_cycle`, `subscription.invalid_period`.
 */
export async function operatorSetPlan(
  ctx: CommandContext,
  input: { email: string; plan: string; cycle: string; period_end: string | null; grant: boolean; operator: string }
): Promise<{ user_uuid: string; subscription: Subscription; changed: boolean; tokens_granted: number }> {
  const owner = await requireAccount(ctx, input.email)
  const plan = findPlan(ctx.config.plans, input.plan)
  if (!plan)
    throw new DomainError('invalid', 'subscription.unknown_plan', `no plan ${input.plan}; one of: ${ctx.config.plans.plans.map(p => p.code).join(', ')}`)
  if (!(CYCLES as readonly string[]).includes(input.cycle))
    throw new DomainError('invalid', 'subscription.invalid_cycle', `cycle must be one of: ${CYCLES.join(', ')}`)
  const cycle = input.cycle as Cycle
  const actor = `operator:${input.operator}`
  if (plan.code === FREE) {
    const r = await endPlan(ctx, { user_uuid: owner, stripe_subscription: null, source: 'operator', as_of: null, actor })
    return { user_uuid: owner, subscription: await loadSubscription(ctx, owner), changed: r.changed, tokens_granted: 0 }
  }
  const before = await loadSubscription(ctx, owner)
  const r = await setPlan(ctx, {
    user_uuid: owner,
    plan: plan.code,
    cycle,
    status: 'active',
    current_period_end: input.period_end,
    cancel_at_period_end: false,
    stripe_subscription: before.stripe_subscription,
    stripe_customer: before.stripe_customer,
    source: 'operator',
    as_of: null,
    grant_period: input.grant,
    actor
  })
  // The grant follows from the change's event (flow `plan-grant`): run here, and by the flow worker should this process die first.
  faultPoint(ctx.config.fault_point, 'plan.after_change')
  const granted = await reactNow(ctx, planGrantFlow, r)
  return { user_uuid: owner, subscription: r.subscription, changed: r.changed, tokens_granted: granted > 0 ? tokensPerInvoice(plan, cycle) : 0 }
}
