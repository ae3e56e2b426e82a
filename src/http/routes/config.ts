import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { CHECK_COSTS, CHECK_NAMES } from '../../domain/checks.ts'
import { SUPPORTED_LOCALES } from '../../domain/locales.ts'
import { SCOPES } from '../../domain/api-key/scopes.ts'
import type { PlanCatalogue } from '../../domain/plans.ts'
import { PlanLimits, planLimits, problems } from '../schemas.ts'

const PlanPrice = z.object({ cents: z.number(), currency: z.string() })

const PublicConfig = z
  .object({
    plans: z.array(
      z.object({
        code: z.string(),
        name: z.string(),
        tokens_per_month: z.number(),
        prices: z.object({ monthly: PlanPrice, yearly: PlanPrice }),
        limits: PlanLimits,
        allowed_checks: z.array(z.string()),
        allowed_scopes: z.array(z.string()).meta({ description: 'scopes an agent may be granted on this plan' })
      })
    ),
    top_up: z.object({
      available: z.boolean().meta({ description: 'whether packs can be bought now (billing configured)' }),
      currency: z.string(),
      packs: z.array(z.object({ quantity: z.number().meta({ description: "the checkout's `top_up_quantity`" }), tokens: z.number(), price_cents: z.number() }))
    }),
    checks: z.array(z.object({ name: z.string(), cost: z.number() })),
    check_costs: z.record(z.string(), z.number()),
    default_checks: z.array(z.string()),
    scopes: z.array(z.string()),
    locales: z.array(z.string()),
    billing_available: z.boolean().meta({ description: 'whether checkout and the portal work here (Stripe configured)' }),
    mail_delivery: z.enum(['smtp', 'outbox']).meta({
      description:
        '`outbox`: this service files mail instead of sending it (no `SMTP_URL`: the embedded default); the operator reads a code with `svc mail show --to <address>`'
    }),
    egress_hold_s: z.number().int().meta({
      description:
        'while this service cannot reach mail servers, how long a live check waits (`deferred`, reason `egress_blocked`, tokens reserved) before it runs anyway (`VERIFIER_EGRESS_HOLD_S`); test keys never wait'
    })
  })
  .meta({ id: 'PublicConfig' })

/**
 * GET /api/config (auth N): the plan grid, the top-up pricing and the per-check token
 * costs from the plan catalogue (`PLANS_FILE`), the locales, and how long live checks are
 * held while egress is blocked.
 */
export function configRoutes(
  fastify: FastifyInstance,
  catalogue: PlanCatalogue,
  billingConfigured: boolean,
  mailDelivery: 'smtp' | 'outbox',
  egressHoldS: number
): void {
  const body = {
    plans: catalogue.plans.map(p => ({
      code: p.code,
      name: p.name,
      tokens_per_month: p.tokens_per_month,
      prices: {
        monthly: { cents: p.prices.monthly.cents, currency: catalogue.currency },
        yearly: { cents: p.prices.yearly.cents, currency: catalogue.currency }
      },
      limits: planLimits(p),
      allowed_checks: [...p.allowed_checks],
      allowed_scopes: [...p.allowed_scopes]
    })),
    top_up: {
      available: billingConfigured && catalogue.top_up.length > 0,
      currency: catalogue.currency,
      packs: catalogue.top_up.map(t => ({ quantity: t.quantity, tokens: t.tokens, price_cents: t.cents }))
    },
    checks: CHECK_NAMES.map(name => ({ name, cost: CHECK_COSTS[name] })),
    check_costs: { ...CHECK_COSTS },
    default_checks: [...CHECK_NAMES],
    scopes: [...SCOPES],
    locales: [...SUPPORTED_LOCALES],
    billing_available: billingConfigured,
    mail_delivery: mailDelivery,
    egress_hold_s: egressHoldS
  }
  fastify.withTypeProvider<ZodTypeProvider>().route({
    method: 'GET',
    url: '/api/config',
    config: { auth: 'none' },
    schema: {
      operationId: 'getConfig',
      summary: 'Plan grid, top-up pricing and per-check token costs',
      tags: ['Billing'],
      response: { 200: PublicConfig, ...problems() }
    },
    handler: async () => body
  })
}
