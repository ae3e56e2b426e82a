import { z } from 'zod'
import { CYCLES, FREE, type Cycle, type Plan, type PlanCatalogue } from '../plans.ts'
import type { SubscriptionStatus } from '../subscription/events.ts'

// What the Stripe webhook handler reads of Stripe's objects (Checkout Session, Invoice and
// its lines, Subscription: https://docs.stripe.com/api), checked with zod as it reads them,
// and how a price names a plan of the catalogue.

const Id = z.string().min(1).max(255)

const Metadata = z.record(z.string(), z.string()).nullish()

/** What each object read here carries: its id and the customer it belongs to (absent on a guest Checkout Session). */
const CustomerObject = z.object({ id: Id, customer: Id.nullish() })

export const CheckoutSession = CustomerObject.extend({
  mode: z.string(),
  client_reference_id: z.string().nullish(),
  metadata: Metadata,
  payment_status: z.string().nullish(),
  subscription: Id.nullish()
})

/** A line's `parent.*_details` (Stripe API 2025-03-31 and later): whether the line is a proration. */
const LineParentDetails = z.object({ proration: z.boolean().nullish() }).nullish()

/**
 * An invoice line item (https://docs.stripe.com/api/invoices/line_item), in today's shape
 * (`pricing.price_details.price`, a price id or the expanded price; `parent.subscription_item_details`
 * or `parent.invoice_item_details` with `proration`) and the shape before API 2025-03-31
 * (`price.id`, `proration`, `type` `subscription` or `invoiceitem` on the line).
 */
const InvoiceLine = z.object({
  amount: z.number().nullish(),
  period: z.object({ start: z.number(), end: z.number() }).nullish(),
  pricing: z.object({ price_details: z.object({ price: z.union([Id, z.object({ id: Id })]) }).nullish() }).nullish(),
  parent: z.object({ subscription_item_details: LineParentDetails, invoice_item_details: LineParentDetails }).nullish(),
  price: z.object({ id: Id }).nullish(),
  proration: z.boolean().nullish(),
  type: z.string().nullish()
})

type InvoiceLine = z.infer<typeof InvoiceLine>

export const Invoice = CustomerObject.extend({
  billing_reason: z.string().nullish(),
  parent: z.object({ subscription_details: z.object({ subscription: Id.nullish(), metadata: Metadata }).nullish() }).nullish(),
  /** Before API 2025-03-31 the subscription's metadata was here. */
  subscription_details: z.object({ metadata: Metadata }).nullish(),
  lines: z.object({ data: z.array(InvoiceLine) })
})

export const SubscriptionObject = CustomerObject.extend({
  status: z.string(),
  cancel_at_period_end: z.boolean().nullish(),
  metadata: Metadata,
  items: z.object({ data: z.array(z.object({ price: z.object({ id: Id }), current_period_end: z.number().nullish() })) })
})

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The plan and cycle a Stripe price id is sold as in the catalogue, or null. */
export function planOfPrice(catalogue: PlanCatalogue, price: string): { plan: Plan; cycle: Cycle } | null {
  for (const plan of catalogue.plans) for (const cycle of CYCLES) if (plan.prices[cycle].stripe_price === price) return { plan, cycle }
  return null
}

/**
 * Invoices that open a subscription period (Invoice object, `billing_reason`): the first
 * invoice of a subscription and each renewal. Others (`subscription_update`: a plan change's
 * prorations; `manual`, `subscription_threshold`, `quote_accept`, …) grant no plan tokens.
 */
export const OPENS_PERIOD: readonly string[] = ['subscription_create', 'subscription_cycle']

/** Whether an invoice line is a proration (either shape of `InvoiceLine`). */
const isProration = (l: InvoiceLine): boolean =>
  l.parent?.subscription_item_details?.proration === true || l.parent?.invoice_item_details?.proration === true || l.proration === true

/** Whether the line was made by a subscription item (not an invoice item added to the invoice). */
const ofSubscriptionItem = (l: InvoiceLine): boolean =>
  l.parent ? (l.parent.subscription_item_details ?? null) !== null : (l.type ?? 'subscription') === 'subscription'

const priceOf = (l: InvoiceLine): string | null => {
  const p = l.pricing?.price_details?.price
  return (typeof p === 'string' ? p : p?.id) ?? l.price?.id ?? null
}

/**
 * The line of an invoice that covers the period it opens, with its plan and cycle: among
 * the lines made by a subscription item that are not prorations and carry a paid plan's
 * price and a period, the one whose period starts last (the new period; a renewal may also
 * carry the previous period's prorations, which are skipped). Null when there is none.
 */
export function periodLine(catalogue: PlanCatalogue, lines: readonly InvoiceLine[]): { line: InvoiceLine; plan: Plan; cycle: Cycle } | null {
  let best: { line: InvoiceLine; plan: Plan; cycle: Cycle; start: number } | null = null
  for (const line of lines) {
    if (isProration(line) || !ofSubscriptionItem(line) || !line.period) continue
    const price = priceOf(line)
    const priced = price === null ? null : planOfPrice(catalogue, price)
    if (!priced || priced.plan.code === FREE) continue
    if (best === null || line.period.start > best.start) best = { line, ...priced, start: line.period.start }
  }
  return best && { line: best.line, plan: best.plan, cycle: best.cycle }
}

/**
 * Stripe's subscription `status` as we keep it. `paused` (no invoices until resumed) and any
 * status Stripe may add are kept as `unpaid`: neither holds a paid plan. `canceled` and
 * `incomplete_expired` end the plan instead (see `onSubscriptionChanged`).
 */
export const STATUS: Readonly<Record<string, SubscriptionStatus>> = {
  active: 'active',
  trialing: 'trialing',
  past_due: 'past_due',
  unpaid: 'unpaid',
  incomplete: 'incomplete',
  paused: 'unpaid'
}

export const iso = (unix: number | null | undefined): string | null => (typeof unix === 'number' ? new Date(unix * 1000).toISOString() : null)
