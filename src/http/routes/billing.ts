import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { planFor } from '../../domain/plans.ts'
import { subscriptionOf } from '../../projections/subscriptions.ts'
import { principalOf } from '../plugins/auth.ts'
import { BODY_PROBLEMS, PlanLimits, Timestamp, json, planLimits, problems } from '../schemas.ts'
import { billingWebhook } from '../../flows/stripe-event/billing-webhook.ts'
import { billingPortal } from '../../commands/billing/billing-portal.ts'
import { billingCheckout } from '../../commands/billing/billing-checkout.ts'
import { requireBilling } from '../../ports/billing.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The caller's subscription (docs/interface.md §2 "Subscription"; Free when it never subscribed). */
const SubscriptionView = z
  .object({
    plan: z
      .object({ code: z.string(), name: z.string() })
      .meta({ description: 'the plan subscribed to (Free when the account never subscribed or its subscription ended)' }),
    status: z.enum(['active', 'trialing', 'past_due', 'unpaid', 'incomplete']),
    billing_cycle: z.enum(['monthly', 'yearly']).nullable().meta({ description: 'null on Free' }),
    current_period_end: Timestamp.nullable(),
    cancel_at_period_end: z.boolean().meta({ description: 'the plan ends (back to Free) at current_period_end' }),
    limits: PlanLimits.meta({
      description: "the limits that apply now: the plan's while its subscription is `active`, `trialing` or `past_due` within 7 days; Free's otherwise"
    }),
    limits_plan: z.string().meta({ description: "the plan whose limits apply now (`free` while the subscription's status holds no paid plan)" }),
    tokens_per_month: z.number(),
    has_billing_account: z.boolean().meta({ description: 'whether `POST /api/billing/portal` can open a portal' }),
    updated_at: Timestamp.nullable()
  })
  .meta({ id: 'Subscription' })

/** Subscription and billing (docs/interface.md §4, "Billing, wallet, subscription, config"). */
export function billingRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  app.route({
    method: 'GET',
    url: '/api/subscription',
    config: { auth: 'any', scope: 'billing:read' },
    schema: {
      operationId: 'getSubscription',
      summary: "The caller's subscription (Free when it never subscribed)",
      tags: ['Billing'],
      response: { 200: SubscriptionView, ...problems(401, 403) }
    },
    handler: async request => {
      const s = await subscriptionOf(rt.ctx, principalOf(request).user_uuid)
      const subscribed = planFor(rt.ctx.config.plans, s.subscribed_plan)
      const plan = planFor(rt.ctx.config.plans, s.plan)
      return {
        plan: { code: subscribed.code, name: subscribed.name },
        status: s.status,
        billing_cycle: s.cycle,
        current_period_end: s.current_period_end,
        cancel_at_period_end: s.cancel_at_period_end,
        limits: planLimits(plan),
        limits_plan: plan.code,
        tokens_per_month: subscribed.tokens_per_month,
        has_billing_account: s.stripe_customer !== null,
        updated_at: s.updated_at
      }
    }
  })
}

const Checkout = z
  .object({
    plan: z.string().max(64).optional().meta({ description: "a paid plan's code (subscription mode)" }),
    cycle: z.enum(['monthly', 'yearly']).optional().meta({ description: 'billing cycle of the plan; default monthly' }),
    top_up_quantity: z.number().int().min(1).max(1_000_000).optional().meta({ description: 'a top-up pack of `/api/config` (payment mode); instead of plan' }),
    locale: z.string().max(16).meta({ description: "language of the hosted page: one of the service's locales" })
  })
  .strict()
  .meta({
    examples: [
      { plan: 'pro', cycle: 'yearly', locale: 'en' },
      { top_up_quantity: 5, locale: 'fr' }
    ]
  })

const Portal = z
  .object({
    locale: z.string().max(16).optional().meta({ description: "language of the portal; default: the browser's" })
  })
  .strict()

const Redirect = z.object({ url: z.string().meta({ format: 'uri' }) })

/** Checkout, portal and Stripe's webhook (interface "Billing"; Stripe's documented flows). */
export function billingPaymentRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  app.route({
    method: 'POST',
    url: '/api/billing/checkout',
    config: { auth: 'jwt', invalid: 'billing_checkout.invalid_request' },
    schema: {
      operationId: 'createCheckout',
      summary: 'A hosted checkout for a paid plan (subscription) or a top-up pack (payment)',
      tags: ['Billing'],
      body: Checkout,
      response: { 200: json(Redirect.extend({ session_id: z.string() }), 'Where to send the customer'), ...problems(...BODY_PROBLEMS, 401, 409, 503) }
    },
    handler: async request => {
      const p = principalOf(request)
      return await billingCheckout(rt.ctx, rt.billing, { user_uuid: p.user_uuid, ...request.body })
    }
  })

  app.route({
    method: 'POST',
    url: '/api/billing/portal',
    config: { auth: 'jwt', invalid: 'billing_portal.invalid_request' },
    schema: {
      operationId: 'createPortal',
      summary: 'The hosted billing portal (plan changes, cancellation, invoices)',
      tags: ['Billing'],
      body: Portal.nullish(),
      response: { 200: json(Redirect, 'Where to send the customer'), ...problems(...BODY_PROBLEMS, 401, 404, 503) }
    },
    handler: async request => {
      const p = principalOf(request)
      return await billingPortal(rt.ctx, rt.billing, { user_uuid: p.user_uuid, locale: request.body?.locale })
    }
  })

  // Stripe signs the exact bytes it sends: this route reads its body raw (its own content-type parser).
  void fastify.register(async child => {
    child.removeAllContentTypeParsers()
    child.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) => {
      done(null, body)
    })
    child.withTypeProvider<ZodTypeProvider>().route({
      method: 'POST',
      url: '/webhooks/stripe',
      config: { auth: 'none', invalid: 'billing_webhook.invalid_event' },
      schema: {
        operationId: 'stripeWebhook',
        summary: "Stripe's webhook: signed events (Stripe-Signature), each handled once by event id",
        tags: ['Billing'],
        headers: z.object({ 'stripe-signature': z.string().max(4096).optional() }),
        body: z.unknown().meta({ description: 'a Stripe event, as Stripe sends it' }),
        response: {
          200: json(z.object({ received: z.boolean(), duplicate: z.boolean() }), 'Handled (or a repeat of an event handled before)'),
          ...problems(400, 413, 503)
        }
      },
      handler: async request => {
        const event = requireBilling(rt.billing).parseWebhook(request.body as Buffer, request.headers['stripe-signature'])
        const r = await billingWebhook(rt.ctx, event)
        await rt.caughtUp(request, r.position)
        return { received: true, duplicate: r.duplicate }
      }
    })
  })
}
