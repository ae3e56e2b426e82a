import { DomainError } from '../domain/shared.ts'
import * as subscription from '../domain/subscription/decider.ts'
import * as wallet from '../domain/wallet/decider.ts'
import type { Subscription, SubscriptionSource, SubscriptionStatus } from '../domain/subscription/events.ts'
import { CYCLES, FREE, findPlan, tokensPerInvoice, type Cycle, type Plan } from '../domain/plans.ts'
import { type CommandContext } from './context.ts'
import { handle, load } from './command-handler.ts'
import { requireAccount } from './email-index.ts'

/** The stream of an account's subscription (every event carries it whole: one event read per command). */
export const subscriptionStream = (owner: string): string => `subscription-${owner}`

export interface PlanChange {
  user_uuid: string
  plan: string
  cycle: Cycle
  status: SubscriptionStatus
  current_period_end: string | null
  cancel_at_period_end: boolean
  stripe_subscription: string | null
  stripe_customer: string | null
  source: SubscriptionSource
  /** When Stripe made the event (Unix s); null for an operator's change. */
  as_of: number | null
  actor: string
}

/**
 * Moves an account to a plan of the catalogue (or Free), as billing and operators do. The
 * subscription decider ignores an older Stripe event, an ended or another Stripe
 * subscription, and a return to `incomplete` (`ignoredBecause`).
 * @returns the subscription after it, the position of the append (or the stream's head),
 *   whether it changed, and why not when the decider ignored it (null otherwise).
 * @throws DomainError invalid `subscription.unknown_plan` for a code not in the catalogue.
 */
export async function setPlan (ctx: CommandContext, c: PlanChange): Promise<{ subscription: Subscription, position: number, changed: boolean, ignored: string | null }> {
  if (!findPlan(ctx.config.plans, c.plan)) throw new DomainError('invalid', 'subscription.unknown_plan', `no plan ${c.plan}; one of: ${ctx.config.plans.plans.map(p => p.code).join(', ')}`)
  const { actor, ...data } = c
  const command = { type: 'SetPlan', data: { ...data, now: ctx.now().toISOString() } } as const
  const r = await handle(ctx, subscriptionStream(c.user_uuid), subscription, command, { actor })
  const changed = r.events.length > 0
  return { subscription: r.state.subscription ?? subscription.freeSubscription(c.user_uuid), position: r.position, changed, ignored: changed ? null : subscription.ignoredBecause(command, r.state) }
}

/**
 * Ends the paid plan (back to Free); a named Stripe subscription must be the current one.
 * @returns the position, whether it changed, and why not when the decider ignored it.
 */
export async function endPlan (ctx: CommandContext, c: { user_uuid: string, stripe_subscription: string | null, source: SubscriptionSource, as_of: number | null, actor: string }): Promise<{ position: number, changed: boolean, ignored: string | null }> {
  const command = { type: 'EndPlan', data: { user_uuid: c.user_uuid, stripe_subscription: c.stripe_subscription, source: c.source, as_of: c.as_of, now: ctx.now().toISOString() } } as const
  const r = await handle(ctx, subscriptionStream(c.user_uuid), subscription, command, { actor: c.actor })
  const changed = r.events.length > 0
  return { position: r.position, changed, ignored: changed ? null : subscription.ignoredBecause(command, r.state) }
}

/** Records the account's Stripe customer (idempotent). */
export async function linkCustomer (ctx: CommandContext, owner: string, customer: string): Promise<number> {
  const r = await handle(ctx, subscriptionStream(owner), subscription, { type: 'LinkCustomer', data: { user_uuid: owner, stripe_customer: customer, now: ctx.now().toISOString() } }, { actor: 'billing' })
  return r.position
}

/** The account's subscription from its stream (commands decide on it, not on the read model). */
export async function loadSubscription (ctx: CommandContext, owner: string): Promise<Subscription> {
  return (await load(ctx, subscriptionStream(owner), subscription)).state.subscription ?? subscription.freeSubscription(owner)
}

/**
 * Grants a plan's tokens for one paid period, once per `grant_uuid` (a Stripe invoice id,
 * or an operator's change). @returns the wallet's position.
 */
export async function grantPeriodTokens (ctx: CommandContext, c: { user_uuid: string, plan: Plan, cycle: Cycle, grant_uuid: string, actor: string }): Promise<number> {
  const r = await handle(ctx, `wallet-${c.user_uuid}`, wallet, {
    type: 'GrantTokens',
    data: { user_uuid: c.user_uuid, grant_uuid: c.grant_uuid, amount: tokensPerInvoice(c.plan, c.cycle), source: 'plan', plan: c.plan.code, reason: `${c.plan.name} plan (${c.cycle})`, now: ctx.now().toISOString() }
  }, { actor: c.actor })
  return r.position
}

/**
 * `svc subscription set --email --plan [--cycle] [--period-end] [--no-grant]`: what billing
 * appends, by hand: the plan starts, changes or ends (PlanStarted / PlanChanged / PlanEnded)
 * and, for a paid plan, one period's tokens are granted as an invoice would (unless `grant`
 * is false). Nothing changes when the account is on that plan and cycle already.
 * @throws DomainError not_found `account.not_found`; invalid `subscription.unknown_plan`,
 *   `subscription.invalid_cycle`, `subscription.invalid_period`.
 */
export async function operatorSetPlan (ctx: CommandContext, input: { email: string, plan: string, cycle: string, period_end: string | null, grant: boolean, operator: string }): Promise<{ user_uuid: string, subscription: Subscription, changed: boolean, tokens_granted: number }> {
  const owner = await requireAccount(ctx, input.email)
  const plan = findPlan(ctx.config.plans, input.plan)
  if (!plan) throw new DomainError('invalid', 'subscription.unknown_plan', `no plan ${input.plan}; one of: ${ctx.config.plans.plans.map(p => p.code).join(', ')}`)
  if (!(CYCLES as readonly string[]).includes(input.cycle)) throw new DomainError('invalid', 'subscription.invalid_cycle', `cycle must be one of: ${CYCLES.join(', ')}`)
  const cycle = input.cycle as Cycle
  const actor = `operator:${input.operator}`
  if (plan.code === FREE) {
    const r = await endPlan(ctx, { user_uuid: owner, stripe_subscription: null, source: 'operator', as_of: null, actor })
    return { user_uuid: owner, subscription: await loadSubscription(ctx, owner), changed: r.changed, tokens_granted: 0 }
  }
  const before = await loadSubscription(ctx, owner)
  const r = await setPlan(ctx, { user_uuid: owner, plan: plan.code, cycle, status: 'active', current_period_end: input.period_end, cancel_at_period_end: false, stripe_subscription: before.stripe_subscription, stripe_customer: before.stripe_customer, source: 'operator', as_of: null, actor })
  const newPeriod = r.changed && (before.plan !== plan.code || before.cycle !== cycle)
  let granted = 0
  if (input.grant && newPeriod) {
    await grantPeriodTokens(ctx, { user_uuid: owner, plan, cycle, grant_uuid: `operator-${ctx.newId()}`, actor })
    granted = tokensPerInvoice(plan, cycle)
  }
  return { user_uuid: owner, subscription: r.subscription, changed: r.changed, tokens_granted: granted }
}
