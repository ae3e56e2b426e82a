import { z } from 'zod'
import { DomainError } from '../../domain/shared.ts'
import { faultPoint } from '../../lib/faults.ts'
import { CYCLES, FREE, findPlan, type Cycle } from '../../domain/plans.ts'
import type { SubscriptionStatus } from '../../domain/subscription/events.ts'
import type { StripeEvent } from '../../ports/billing.ts'
import type { CommandContext } from '../../commands/context.ts'
import { grantToWallet } from '../../commands/wallet/shared/grant.ts'
import { endPlan } from '../../commands/subscription/end-plan.ts'
import { grantPeriodTokens } from './grant-period-tokens.ts'
import { linkCustomer } from '../../commands/subscription/link-customer.ts'
import { loadSubscription } from '../../commands/subscription/read.ts'
import { setPlan, type PlanChange } from '../../commands/subscription/set-plan.ts'
import { CheckoutSession, Invoice, SubscriptionObject, UUID, planOfPrice, OPENS_PERIOD, periodLine, STATUS, iso } from '../../domain/billing/stripe-objects.ts'
import { stripeEvents } from '../../commands/billing/aggregate.ts'
import { users } from '../../commands/user/aggregate.ts'

/** @returns the account uuid when it names an existing, not deleted account. */
async function accountOf(ctx: CommandContext, candidate: string | null | undefined): Promise<string | null> {
  if (!candidate || !UUID.test(candidate)) return null
  const state = (await users.load(ctx, candidate)).state
  return state.status === 'none' || state.status === 'deleted' ? null : candidate
}

/** What one Stripe event did: the account it concerned and its effects (for the receipt). */
interface Outcome {
  user_uuid: string | null
  effects: string[]
  position: number
}

async function onCheckoutCompleted(ctx: CommandContext, e: StripeEvent): Promise<Outcome> {
  const s = CheckoutSession.parse(e.data.object)
  const owner = await accountOf(ctx, s.client_reference_id ?? s.metadata?.user_uuid)
  if (!owner) return { user_uuid: null, effects: ['ignored: no account'], position: 0 }
  const effects: string[] = []
  let position = 0
  if (s.customer) {
    position = await linkCustomer(ctx, owner, s.customer)
    effects.push('customer linked')
  }
  if (s.mode === 'subscription') {
    const plan = findPlan(ctx.config.plans, s.metadata?.plan ?? '')
    const cycle = (CYCLES as readonly string[]).includes(s.metadata?.cycle ?? '') ? (s.metadata!.cycle as Cycle) : null
    if (!plan || !cycle || !s.subscription) return { user_uuid: owner, effects: [...effects, 'ignored: no plan'], position }
    const current = await loadSubscription(ctx, owner)
    // The subscription's own events may have arrived first: they know its period; keep them.
    if (current.stripe_subscription === s.subscription && current.plan !== FREE)
      return { user_uuid: owner, effects: [...effects, 'plan already known'], position }
    // Checkout Session `payment_status`: `paid`, or `no_payment_required` (a trial, a $0 first
    // invoice), makes the subscription active; `unpaid` (funds not yet available) leaves it
    // `incomplete`: the plan is recorded but its caps wait for Stripe to say it is active.
    const paid = s.payment_status === 'paid' || s.payment_status === 'no_payment_required'
    const status: SubscriptionStatus = paid ? 'active' : 'incomplete'
    const r = await planFromStripe(
      ctx,
      e,
      {
        user_uuid: owner,
        plan: plan.code,
        cycle,
        status,
        current_period_end: null,
        cancel_at_period_end: false,
        stripe_subscription: s.subscription,
        stripe_customer: s.customer ?? null
      },
      `plan ${plan.code} (${cycle}) ${status}${paid ? '' : ` (payment ${s.payment_status ?? 'unknown'})`}`
    )
    return { user_uuid: owner, effects: [...effects, r.effect], position: Math.max(position, r.position) }
  }
  if (s.mode === 'payment') {
    if (s.payment_status !== 'paid') return { user_uuid: owner, effects: [...effects, `ignored: payment ${s.payment_status ?? 'unknown'}`], position }
    const pack = ctx.config.plans.top_up.find(p => String(p.quantity) === s.metadata?.top_up_quantity)
    if (!pack) return { user_uuid: owner, effects: [...effects, 'ignored: no top-up pack'], position }
    const r = await grantToWallet(
      ctx,
      {
        user_uuid: owner,
        grant_uuid: `topup-${s.id}`,
        amount: pack.tokens,
        source: 'top_up',
        plan: null,
        reason: `top-up of ${pack.tokens} tokens`
      },
      'billing'
    )
    return {
      user_uuid: owner,
      effects: [...effects, r.events.length > 0 ? `granted ${pack.tokens} tokens` : 'top-up granted already'],
      position: Math.max(position, r.position)
    }
  }
  return { user_uuid: owner, effects: [...effects, `ignored: mode ${s.mode}`], position }
}

/**
 * `invoice.paid`: a period's plan tokens, once per invoice (grant `invoice-<id>`), only for
 * an invoice that opens a period (`OPENS_PERIOD`), for the plan of the line that covers the
 * new period (`periodLine`), when that line is not a $0 trial period. The grant follows that
 * line, never the cash collected (`amount_paid`): a renewal paid wholly or partly from the
 * customer's credit balance, or discounted, grants the plan's whole tokens
 * (docs/plans-and-billing.md). Everything else is recorded with the reason it granted nothing.
 */
async function onInvoicePaid(ctx: CommandContext, e: StripeEvent): Promise<Outcome> {
  const inv = Invoice.parse(e.data.object)
  const owner = await accountOf(ctx, inv.parent?.subscription_details?.metadata?.user_uuid ?? inv.subscription_details?.metadata?.user_uuid)
  if (!owner) return { user_uuid: null, effects: ['ignored: no account'], position: 0 }
  const reason = inv.billing_reason ?? 'none'
  if (!OPENS_PERIOD.includes(reason))
    return {
      user_uuid: owner,
      effects: [`ignored: invoice ${inv.id} (billing_reason ${reason}) opens no period: prorations and other invoices grant no plan tokens`],
      position: 0
    }
  const covering = periodLine(ctx.config.plans, inv.lines.data)
  if (!covering) return { user_uuid: owner, effects: [`ignored: invoice ${inv.id} has no line of a plan's price covering a new period`], position: 0 }
  if (!(typeof covering.line.amount === 'number' && covering.line.amount > 0))
    return { user_uuid: owner, effects: [`ignored: invoice ${inv.id} bills its ${covering.plan.code} period at 0 (a trial period)`], position: 0 }
  const position = await grantPeriodTokens(ctx, {
    user_uuid: owner,
    plan: covering.plan,
    cycle: covering.cycle,
    grant_uuid: `invoice-${inv.id}`,
    actor: 'billing'
  })
  return { user_uuid: owner, effects: [`granted ${covering.plan.code} (${covering.cycle}) tokens for invoice ${inv.id}`], position }
}

async function onSubscriptionChanged(ctx: CommandContext, e: StripeEvent): Promise<Outcome> {
  const sub = SubscriptionObject.parse(e.data.object)
  const owner = await accountOf(ctx, sub.metadata?.user_uuid)
  if (!owner) return { user_uuid: null, effects: ['ignored: no account'], position: 0 }
  if (e.type === 'customer.subscription.deleted' || sub.status === 'canceled' || sub.status === 'incomplete_expired') {
    const r = await endPlan(ctx, { user_uuid: owner, stripe_subscription: sub.id, source: 'billing', as_of: e.created, actor: 'billing' })
    return {
      user_uuid: owner,
      effects: [r.changed ? 'plan ended: Free' : `plan end changed nothing${r.ignored ? `: ${r.ignored}` : ''}`],
      position: r.position
    }
  }
  const item = sub.items.data[0]
  const priced = item ? planOfPrice(ctx.config.plans, item.price.id) : null
  if (!priced) return { user_uuid: owner, effects: ['ignored: no plan price'], position: 0 }
  const r = await planFromStripe(
    ctx,
    e,
    {
      user_uuid: owner,
      plan: priced.plan.code,
      cycle: priced.cycle,
      status: STATUS[sub.status] ?? 'unpaid',
      current_period_end: iso(item.current_period_end),
      cancel_at_period_end: sub.cancel_at_period_end ?? false,
      stripe_subscription: sub.id,
      stripe_customer: sub.customer ?? null
    },
    `plan ${priced.plan.code} (${priced.cycle}) ${sub.status}${sub.cancel_at_period_end ? ', cancels at period end' : ''}`
  )
  return { user_uuid: owner, effects: [r.effect], position: r.position }
}

/**
 * Sets the plan a Stripe event `e` says (billing is the actor; the event's creation time
 * orders it against the others: the subscription decider ignores an older one).
 * @returns what it did, in words (`changed`: when the plan changed), and the append's position.
 */
async function planFromStripe(
  ctx: CommandContext,
  e: StripeEvent,
  change: Omit<PlanChange, 'source' | 'as_of' | 'actor'>,
  changed: string
): Promise<{ effect: string; position: number }> {
  const r = await setPlan(ctx, { ...change, source: 'billing', as_of: e.created, actor: 'billing' })
  return { effect: r.changed ? changed : r.ignored ? `ignored: ${r.ignored}` : 'plan unchanged', position: r.position }
}

const HANDLERS: Readonly<Record<string, (ctx: CommandContext, e: StripeEvent) => Promise<Outcome>>> = {
  'checkout.session.completed': onCheckoutCompleted,
  'invoice.paid': onInvoicePaid,
  'customer.subscription.created': onSubscriptionChanged,
  'customer.subscription.updated': onSubscriptionChanged,
  'customer.subscription.deleted': onSubscriptionChanged
}

/** Whether a verified webhook body is a Stripe event object (https://docs.stripe.com/api/events/object) as far as we read it. */
function isStripeEvent(e: unknown): e is StripeEvent {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false
  const { id, type, created, data } = e as Record<string, unknown>
  if (typeof id !== 'string' || !/^evt_[A-Za-z0-9_]{1,250}$/.test(id) || typeof type !== 'string' || typeof created !== 'number' || !Number.isFinite(created))
    return false
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false
  const object = (data as Record<string, unknown>).object
  return typeof object === 'object' && object !== null && !Array.isArray(object)
}

/**
 * A verified Stripe webhook event turned into ours, once per Stripe event id:
 * - `checkout.session.completed`: subscription mode starts the plan, `active` when the
 *   session's `payment_status` is `paid` or `no_payment_required`, `incomplete` otherwise
 *   (its caps wait for payment); payment mode grants the top-up pack's tokens once per
 *   session, when `paid`;
 * - `invoice.paid`: the plan's tokens for one period, once per invoice, only when the
 *   invoice opens a period (`billing_reason` `subscription_create` or `subscription_cycle`),
 *   for the plan of its non-proration line covering the new period; proration invoices
 *   (`subscription_update`) and others grant nothing (see `onInvoicePaid`);
 * - `customer.subscription.created` / `updated`: plan, cycle, status, period end or
 *   cancellation of the account's current subscription (the subscription decider ignores
 *   older events, an ended subscription, another subscription while one is held);
 *   `deleted`, or a status `canceled` / `incomplete_expired`, ends the plan (Free again).
 * Which statuses hold the paid plan's caps is decided where they are read (`planInEffect`).
 * Other types are acknowledged and recorded. Each effect is idempotent on its own (grant
 * ids, deciders that append nothing when nothing changes), so a crash before the receipt is
 * recorded is healed by Stripe's retry. The receipt's effects say what was done or why not.
 * @returns whether it repeated an event handled before, and the effects.
 * @throws DomainError invalid `billing_webhook.invalid_event` for a body that is not a Stripe
 *   event object (`null`, a number, a string, an array, missing id, type, created or
 *   data.object) or an event whose fields do not parse; nothing changes.
 */
export async function billingWebhook(ctx: CommandContext, e: unknown): Promise<{ duplicate: boolean; effects: string[]; position: number }> {
  if (!isStripeEvent(e)) throw new DomainError('invalid', 'billing_webhook.invalid_event', 'not a Stripe event')
  if ((await stripeEvents.load(ctx, e.id)).state.handled) return { duplicate: true, effects: [], position: 0 }
  const handler = HANDLERS[e.type]
  let outcome: Outcome
  try {
    outcome = handler ? await handler(ctx, e) : { user_uuid: null, effects: [`ignored: ${e.type}`], position: 0 }
  } catch (err) {
    if (err instanceof z.ZodError)
      throw new DomainError('invalid', 'billing_webhook.invalid_event', `${e.type}: ${err.issues.map(i => `${i.path.join('.')}: ${i.message}`).join('; ')}`)
    throw err
  }
  // The receipt comes last: a crash before it leaves the event unanswered, Stripe delivers it again, and each effect is idempotent (grant ids, the plan's ordering by `created`).
  faultPoint(ctx.config.fault_point, 'stripe.after_effects')
  const r = await stripeEvents.handle(
    ctx,
    e.id,
    {
      type: 'BillingWebhook',
      data: { event_id: e.id, event_type: e.type, user_uuid: outcome.user_uuid, effects: outcome.effects, handled_at: ctx.now().toISOString() }
    },
    { actor: 'billing' }
  )
  return { duplicate: r.events.length === 0, effects: outcome.effects, position: Math.max(outcome.position, r.position) }
}
