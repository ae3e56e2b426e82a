import { DomainError } from '../../domain/shared.ts'
import { FREE, findPlan, type Cycle } from '../../domain/plans.ts'
import { isLocale, SUPPORTED_LOCALES } from '../../domain/locales.ts'
import type { SubscriptionStatus } from '../../domain/subscription/events.ts'
import type { Billing } from '../../ports/billing.ts'
import type { CommandContext } from '../context.ts'
import { loadSubscription } from '../subscription/read.ts'
import { requireBilling } from '../../ports/billing.ts'

/**
 * Statuses of a subscription that has not ended, whatever caps they give: a second checkout
 * for a plan is a 409 (change or pay it in the portal). A second Stripe subscription would be
 * ignored anyway while this one is current (see the subscription decider's `ignoredBecause`).
 */
const HELD: readonly SubscriptionStatus[] = ['active', 'trialing', 'past_due', 'unpaid', 'incomplete']

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
 * @throws BillingUnavailableError when billing is not configured or Stripe does not answer
 *   (503), for a request that passed the checks above.
 */
export async function billingCheckout(
  ctx: CommandContext,
  billing: Billing | null,
  input: { user_uuid: string; plan?: string; cycle?: Cycle; top_up_quantity?: number; locale: string }
): Promise<{ url: string; session_id: string }> {
  // The request is judged first (400, 409); a service without Stripe answers 503 only for a request it would have taken.
  if ((input.plan === undefined) === (input.top_up_quantity === undefined))
    throw new DomainError('invalid', 'billing_checkout.invalid_request', 'give either plan (with cycle) or top_up_quantity')
  if (!isLocale(input.locale)) throw new DomainError('invalid', 'billing_checkout.invalid_locale', `locale must be one of: ${SUPPORTED_LOCALES.join(', ')}`)
  const catalogue = ctx.config.plans
  const current = await loadSubscription(ctx, input.user_uuid)
  const urls = { success_url: `${ctx.base_url()}/billing/success?session_id={CHECKOUT_SESSION_ID}`, cancel_url: `${ctx.base_url()}/billing/cancel` }
  if (input.plan !== undefined) {
    const cycle = input.cycle ?? 'monthly'
    const plan = findPlan(catalogue, input.plan)
    const price = plan?.prices[cycle].stripe_price ?? null
    if (!plan || plan.code === FREE || price === null)
      throw new DomainError(
        'invalid',
        'billing_checkout.unknown_plan',
        `plan must be one of: ${catalogue.plans
          .filter(p => p.code !== FREE && p.prices[cycle].stripe_price !== null)
          .map(p => p.code)
          .join(', ')}`
      )
    if (current.plan !== FREE && HELD.includes(current.status))
      throw new DomainError(
        'conflict',
        'billing_checkout.already_subscribed',
        `the account holds the ${current.plan} plan; change or cancel it in the billing portal`
      )
    const s = await requireBilling(billing).checkout({
      mode: 'subscription',
      price,
      quantity: 1,
      customer: current.stripe_customer,
      user_uuid: input.user_uuid,
      metadata: { user_uuid: input.user_uuid, plan: plan.code, cycle },
      locale: input.locale,
      ...urls
    })
    return { url: s.url, session_id: s.id }
  }
  const pack = catalogue.top_up.find(p => p.quantity === input.top_up_quantity)
  if (!pack || pack.stripe_price === null)
    throw new DomainError(
      'invalid',
      'billing_checkout.unknown_quantity',
      `top_up_quantity must be one of: ${catalogue.top_up
        .filter(p => p.stripe_price !== null)
        .map(p => p.quantity)
        .join(', ')}`
    )
  const s = await requireBilling(billing).checkout({
    mode: 'payment',
    price: pack.stripe_price,
    quantity: 1,
    customer: current.stripe_customer,
    user_uuid: input.user_uuid,
    metadata: { user_uuid: input.user_uuid, top_up_quantity: String(pack.quantity) },
    locale: input.locale,
    ...urls
  })
  return { url: s.url, session_id: s.id }
}
