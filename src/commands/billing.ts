import { z } from 'zod'
import { DomainError } from '../domain/shared.ts'
import * as receipts from '../domain/billing/decider.ts'
import * as wallet from '../domain/wallet/decider.ts'
import * as user from '../domain/user/decider.ts'
import { CYCLES, FREE, findPlan, type Cycle, type Plan, type PlanCatalogue } from '../domain/plans.ts'
import { isLocale, SUPPORTED_LOCALES } from '../domain/locales.ts'
import type { SubscriptionStatus } from '../domain/subscription/events.ts'
import { BillingUnavailableError, type Billing, type StripeEvent } from '../infra/billing/stripe.ts'
import { handle, load, type CommandContext } from './context.ts'
import { endPlan, grantPeriodTokens, linkCustomer, loadSubscription, setPlan } from './subscription.ts'

/** Statuses in which a paid subscription is held (a second checkout for a plan is a 409). */
const HELD: readonly SubscriptionStatus[] = ['active', 'trialing', 'past_due', 'unpaid', 'incomplete']

const baseUrl = (ctx: CommandContext): string => (ctx.config.public_url ?? `http://${ctx.config.host}:${ctx.config.port}`).replace(/\/$/, '')

/** @throws BillingUnavailableError when billing is not configured. */
function configured (billing: Billing | null): Billing {
  if (billing === null) throw new BillingUnavailableError('billing is not configured on this service')
  return billing
}

/**
 * POST /api/billing/checkout: a hosted Stripe Checkout Session, in subscription mode for a
 * paid plan and cycle, or in payment mode for a top-up pack (`top_up_quantity`, one of the
 * catalogue's packs). The session carries the account (client reference and metadata),
 * which the webhook reads back.
 * @returns the session's URL (to redirect the customer to) and id.
 * @throws DomainError invalid `billing_checkout.invalid_request` (neither or both of plan
 *   and top_up_quantity), `billing_checkout.unknown_plan` (not in the catalogue, Free, or
 *   not sold through Stripe), `billing_checkout.unknown_quantity`, `billing_checkout.invalid_locale`;
 *   conflict `billing_checkout.already_subscribed` (a paid plan is held: change it in the portal).
 * @throws BillingUnavailableError when billing is not configured or Stripe does not answer (503).
 */
export async function startCheckout (ctx: CommandContext, billing: Billing | null, input: { user_uuid: string, plan?: string, cycle?: Cycle, top_up_quantity?: number, locale: string }): Promise<{ url: string, session_id: string }> {
  const stripe = configured(billing)
  if ((input.plan === undefined) === (input.top_up_quantity === undefined)) throw new DomainError('invalid', 'billing_checkout.invalid_request', 'give either plan (with cycle) or top_up_quantity')
  if (!isLocale(input.locale)) throw new DomainError('invalid', 'billing_checkout.invalid_locale', `locale must be one of: ${SUPPORTED_LOCALES.join(', ')}`)
  const catalogue = ctx.config.plans
  const current = await loadSubscription(ctx, input.user_uuid)
  const urls = { success_url: `${baseUrl(ctx)}/billing/success?session_id={CHECKOUT_SESSION_ID}`, cancel_url: `${baseUrl(ctx)}/billing/cancel` }
  if (input.plan !== undefined) {
    const cycle = input.cycle ?? 'monthly'
    const plan = findPlan(catalogue, input.plan)
    const price = plan?.prices[cycle].stripe_price ?? null
    if (!plan || plan.code === FREE || price === null) throw new DomainError('invalid', 'billing_checkout.unknown_plan', `plan must be one of: ${catalogue.plans.filter(p => p.code !== FREE && p.prices[cycle].stripe_price !== null).map(p => p.code).join(', ')}`)
    if (current.plan !== FREE && HELD.includes(current.status)) throw new DomainError('conflict', 'billing_checkout.already_subscribed', `the account holds the ${current.plan} plan; change or cancel it in the billing portal`)
    const s = await stripe.checkout({ mode: 'subscription', price, quantity: 1, customer: current.stripe_customer, user_uuid: input.user_uuid, metadata: { user_uuid: input.user_uuid, plan: plan.code, cycle }, locale: input.locale, ...urls })
    return { url: s.url, session_id: s.id }
  }
  const pack = catalogue.top_up.find(p => p.quantity === input.top_up_quantity)
  if (!pack || pack.stripe_price === null) throw new DomainError('invalid', 'billing_checkout.unknown_quantity', `top_up_quantity must be one of: ${catalogue.top_up.filter(p => p.stripe_price !== null).map(p => p.quantity).join(', ')}`)
  const s = await stripe.checkout({ mode: 'payment', price: pack.stripe_price, quantity: 1, customer: current.stripe_customer, user_uuid: input.user_uuid, metadata: { user_uuid: input.user_uuid, top_up_quantity: String(pack.quantity) }, locale: input.locale, ...urls })
  return { url: s.url, session_id: s.id }
}

/**
 * POST /api/billing/portal: a hosted Stripe customer portal session for the account's
 * billing account (plan changes, cancellation, invoices).
 * @throws DomainError not_found `billing_portal.no_billing_account` (never checked out);
 *   invalid `billing_portal.invalid_locale`.
 * @throws BillingUnavailableError when billing is not configured or Stripe does not answer (503).
 */
export async function openPortal (ctx: CommandContext, billing: Billing | null, input: { user_uuid: string, locale?: string }): Promise<{ url: string }> {
  const stripe = configured(billing)
  if (input.locale !== undefined && !isLocale(input.locale)) throw new DomainError('invalid', 'billing_portal.invalid_locale', `locale must be one of: ${SUPPORTED_LOCALES.join(', ')}`)
  const current = await loadSubscription(ctx, input.user_uuid)
  if (current.stripe_customer === null) throw new DomainError('not_found', 'billing_portal.no_billing_account', 'no billing account yet: subscribe or buy tokens first')
  return await stripe.portal({ customer: current.stripe_customer, return_url: `${baseUrl(ctx)}/billing`, locale: input.locale ?? 'auto' })
}

// ── Stripe webhooks ──────────────────────────────────────────────────────────────────

const Id = z.string().min(1).max(255)
const Metadata = z.record(z.string(), z.string()).nullish()
const CheckoutSession = z.object({ id: Id, mode: z.string(), customer: Id.nullish(), client_reference_id: z.string().nullish(), metadata: Metadata, payment_status: z.string().nullish(), subscription: Id.nullish() })
const Invoice = z.object({
  id: Id,
  customer: Id.nullish(),
  parent: z.object({ subscription_details: z.object({ subscription: Id.nullish(), metadata: Metadata }).nullish() }).nullish(),
  lines: z.object({ data: z.array(z.object({ pricing: z.object({ price_details: z.object({ price: Id }).nullish() }).nullish(), period: z.object({ end: z.number() }).nullish() })) })
})
const SubscriptionObject = z.object({
  id: Id,
  customer: Id.nullish(),
  status: z.string(),
  cancel_at_period_end: z.boolean().nullish(),
  metadata: Metadata,
  items: z.object({ data: z.array(z.object({ price: z.object({ id: Id }), current_period_end: z.number().nullish() })) })
})
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The plan and cycle a Stripe price id is sold as in the catalogue, or null. */
export function planOfPrice (catalogue: PlanCatalogue, price: string): { plan: Plan, cycle: Cycle } | null {
  for (const plan of catalogue.plans) for (const cycle of CYCLES) if (plan.prices[cycle].stripe_price === price) return { plan, cycle }
  return null
}

const STATUS: Readonly<Record<string, SubscriptionStatus>> = { active: 'active', trialing: 'trialing', past_due: 'past_due', unpaid: 'unpaid', incomplete: 'incomplete', paused: 'unpaid' }
const iso = (unix: number | null | undefined): string | null => typeof unix === 'number' ? new Date(unix * 1000).toISOString() : null

/** @returns the account uuid when it names an existing, not deleted account. */
async function accountOf (ctx: CommandContext, candidate: string | null | undefined): Promise<string | null> {
  if (!candidate || !UUID.test(candidate)) return null
  const state = (await load(ctx, `user-${candidate}`, user)).state
  return state.status === 'none' || state.status === 'deleted' ? null : candidate
}

/** What one Stripe event did: the account it concerned and its effects (for the receipt). */
interface Outcome { user_uuid: string | null, effects: string[], position: number }

async function onCheckoutCompleted (ctx: CommandContext, e: StripeEvent): Promise<Outcome> {
  const s = CheckoutSession.parse(e.data.object)
  const owner = await accountOf(ctx, s.client_reference_id ?? s.metadata?.user_uuid)
  if (!owner) return { user_uuid: null, effects: ['ignored: no account'], position: 0 }
  const effects: string[] = []
  let position = 0
  if (s.customer) { position = await linkCustomer(ctx, owner, s.customer); effects.push('customer linked') }
  if (s.mode === 'subscription') {
    const plan = findPlan(ctx.config.plans, s.metadata?.plan ?? '')
    const cycle = (CYCLES as readonly string[]).includes(s.metadata?.cycle ?? '') ? s.metadata!.cycle as Cycle : null
    if (!plan || !cycle || !s.subscription) return { user_uuid: owner, effects: [...effects, 'ignored: no plan'], position }
    const current = await loadSubscription(ctx, owner)
    // The subscription's own events may have arrived first: they know its period; keep them.
    if (current.stripe_subscription === s.subscription && current.plan !== FREE) return { user_uuid: owner, effects: [...effects, 'plan already known'], position }
    const r = await setPlan(ctx, { user_uuid: owner, plan: plan.code, cycle, status: 'active', current_period_end: null, cancel_at_period_end: false, stripe_subscription: s.subscription, stripe_customer: s.customer ?? null, source: 'billing', as_of: e.created, actor: 'billing' })
    return { user_uuid: owner, effects: [...effects, r.changed ? `plan ${plan.code} (${cycle})` : 'plan unchanged'], position: Math.max(position, r.position) }
  }
  if (s.mode === 'payment') {
    if (s.payment_status !== 'paid') return { user_uuid: owner, effects: [...effects, `ignored: payment ${s.payment_status ?? 'unknown'}`], position }
    const pack = ctx.config.plans.top_up.find(p => String(p.quantity) === s.metadata?.top_up_quantity)
    if (!pack) return { user_uuid: owner, effects: [...effects, 'ignored: no top-up pack'], position }
    const r = await handle(ctx, `wallet-${owner}`, wallet, {
      type: 'GrantTokens',
      data: { user_uuid: owner, grant_uuid: `topup-${s.id}`, amount: pack.tokens, source: 'top_up', plan: null, reason: `top-up of ${pack.tokens} tokens`, now: ctx.now().toISOString() }
    }, { actor: 'billing' })
    return { user_uuid: owner, effects: [...effects, r.events.length > 0 ? `granted ${pack.tokens} tokens` : 'top-up granted already'], position: Math.max(position, r.position) }
  }
  return { user_uuid: owner, effects: [...effects, `ignored: mode ${s.mode}`], position }
}

async function onInvoicePaid (ctx: CommandContext, e: StripeEvent): Promise<Outcome> {
  const inv = Invoice.parse(e.data.object)
  const details = inv.parent?.subscription_details
  const owner = await accountOf(ctx, details?.metadata?.user_uuid)
  if (!owner) return { user_uuid: null, effects: ['ignored: no account'], position: 0 }
  const priced = inv.lines.data.map(l => l.pricing?.price_details?.price).filter((p): p is string => typeof p === 'string').map(p => planOfPrice(ctx.config.plans, p)).find(x => x !== null)
  if (!priced) return { user_uuid: owner, effects: ['ignored: no plan price'], position: 0 }
  const position = await grantPeriodTokens(ctx, { user_uuid: owner, plan: priced.plan, cycle: priced.cycle, grant_uuid: `invoice-${inv.id}`, actor: 'billing' })
  return { user_uuid: owner, effects: [`granted ${priced.plan.code} (${priced.cycle}) tokens for invoice ${inv.id}`], position }
}

async function onSubscriptionChanged (ctx: CommandContext, e: StripeEvent): Promise<Outcome> {
  const sub = SubscriptionObject.parse(e.data.object)
  const owner = await accountOf(ctx, sub.metadata?.user_uuid)
  if (!owner) return { user_uuid: null, effects: ['ignored: no account'], position: 0 }
  if (e.type === 'customer.subscription.deleted' || sub.status === 'canceled' || sub.status === 'incomplete_expired') {
    const r = await endPlan(ctx, { user_uuid: owner, stripe_subscription: sub.id, source: 'billing', as_of: e.created, actor: 'billing' })
    return { user_uuid: owner, effects: [r.changed ? 'plan ended: Free' : 'plan end changed nothing'], position: r.position }
  }
  const item = sub.items.data[0]
  const priced = item ? planOfPrice(ctx.config.plans, item.price.id) : null
  if (!priced) return { user_uuid: owner, effects: ['ignored: no plan price'], position: 0 }
  const r = await setPlan(ctx, {
    user_uuid: owner,
    plan: priced.plan.code,
    cycle: priced.cycle,
    status: STATUS[sub.status] ?? 'incomplete',
    current_period_end: iso(item.current_period_end),
    cancel_at_period_end: sub.cancel_at_period_end ?? false,
    stripe_subscription: sub.id,
    stripe_customer: sub.customer ?? null,
    source: 'billing',
    as_of: e.created,
    actor: 'billing'
  })
  return { user_uuid: owner, effects: [r.changed ? `plan ${priced.plan.code} (${priced.cycle}) ${sub.status}${sub.cancel_at_period_end ? ', cancels at period end' : ''}` : 'plan unchanged'], position: r.position }
}

const HANDLERS: Readonly<Record<string, (ctx: CommandContext, e: StripeEvent) => Promise<Outcome>>> = {
  'checkout.session.completed': onCheckoutCompleted,
  'invoice.paid': onInvoicePaid,
  'customer.subscription.created': onSubscriptionChanged,
  'customer.subscription.updated': onSubscriptionChanged,
  'customer.subscription.deleted': onSubscriptionChanged
}

/**
 * A verified Stripe webhook event turned into ours, once per Stripe event id: a checkout
 * completed starts the plan (subscription mode) or grants the top-up pack's tokens once per
 * session (payment mode); a paid invoice grants the plan's tokens for its period once per
 * invoice; a subscription updated changes plan, cycle, status, period end or cancellation
 * (events older than the latest applied change nothing); a subscription deleted ends the
 * plan (Free again). Other types are acknowledged and recorded. Each effect is idempotent
 * on its own (grant ids, deciders that append nothing when nothing changes), so a crash
 * before the receipt is recorded is healed by Stripe's retry.
 * @returns whether it repeated an event handled before, and the effects.
 * @throws DomainError invalid `billing_webhook.invalid_event` for an event whose fields do not parse.
 */
export async function handleStripeEvent (ctx: CommandContext, e: StripeEvent): Promise<{ duplicate: boolean, effects: string[], position: number }> {
  if (typeof e.id !== 'string' || !/^evt_[A-Za-z0-9_]{1,250}$/.test(e.id) || typeof e.type !== 'string' || typeof e.created !== 'number' || typeof e.data?.object !== 'object' || e.data.object === null) {
    throw new DomainError('invalid', 'billing_webhook.invalid_event', 'not a Stripe event')
  }
  const stream = `stripe_event-${e.id}`
  if ((await load(ctx, stream, receipts)).state.handled) return { duplicate: true, effects: [], position: 0 }
  const handler = HANDLERS[e.type]
  let outcome: Outcome
  try {
    outcome = handler ? await handler(ctx, e) : { user_uuid: null, effects: [`ignored: ${e.type}`], position: 0 }
  } catch (err) {
    if (err instanceof z.ZodError) throw new DomainError('invalid', 'billing_webhook.invalid_event', `${e.type}: ${err.issues.map(i => `${i.path.join('.')}: ${i.message}`).join('; ')}`)
    throw err
  }
  const r = await handle(ctx, stream, receipts, { type: 'RecordStripeEvent', data: { event_id: e.id, event_type: e.type, user_uuid: outcome.user_uuid, effects: outcome.effects, handled_at: ctx.now().toISOString() } }, { actor: 'billing' })
  return { duplicate: r.events.length === 0, effects: outcome.effects, position: Math.max(outcome.position, r.position) }
}
