import { DomainError } from '../../domain/shared.ts'
import { isLocale, SUPPORTED_LOCALES } from '../../domain/locales.ts'
import type { Billing } from '../../ports/billing.ts'
import type { CommandContext } from '../context.ts'
import { loadSubscription } from '../subscription/read.ts'
import { requireBilling } from '../../ports/billing.ts'

/**
 * POST /api/billing/portal: a hosted Stripe customer portal session for the account's
 * billing account (plan changes, cancellation, invoices).
 * @throws DomainError not_found `billing_portal.no_billing_account` (never checked out);
 *   invalid `billing_portal.invalid_locale`.
 * @throws BillingUnavailableError when billing is not configured or Stripe does not answer (503).
 */
export async function billingPortal(ctx: CommandContext, billing: Billing | null, input: { user_uuid: string; locale?: string }): Promise<{ url: string }> {
  if (input.locale !== undefined && !isLocale(input.locale))
    throw new DomainError('invalid', 'billing_portal.invalid_locale', `locale must be one of: ${SUPPORTED_LOCALES.join(', ')}`)
  const current = await loadSubscription(ctx, input.user_uuid)
  if (current.stripe_customer === null)
    throw new DomainError('not_found', 'billing_portal.no_billing_account', 'no billing account yet: subscribe or buy tokens first')
  return await requireBilling(billing).portal({ customer: current.stripe_customer, return_url: `${ctx.base_url()}/billing`, locale: input.locale ?? 'auto' })
}
