import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { PLANS } from '../../domain/plans.ts'
import { CHECK_COSTS, CHECK_NAMES } from '../../domain/checks.ts'
import { SUPPORTED_LOCALES } from '../../domain/locales.ts'
import { SCOPES } from '../../domain/apikey/scopes.ts'
import { problems } from '../schemas.ts'

const PublicConfig = z.object({
  plans: z.array(z.object({
    code: z.string(),
    name: z.string(),
    monthly_price_cents: z.number(),
    currency: z.string(),
    tokens_granted: z.number(),
    limits: z.object({ api_keys: z.number(), agents: z.number(), webhooks: z.number(), max_batch_size: z.number(), rate_limit_per_minute: z.number() }),
    allowed_checks: z.array(z.string()),
    agent_scopes: z.array(z.string())
  })),
  top_up: z.object({ available: z.boolean(), packs: z.array(z.object({ tokens: z.number(), price_cents: z.number(), currency: z.string() })) }),
  checks: z.array(z.object({ name: z.string(), cost: z.number() })),
  check_costs: z.record(z.string(), z.number()),
  default_checks: z.array(z.string()),
  scopes: z.array(z.string()),
  locales: z.array(z.string())
}).meta({ id: 'PublicConfig' })

/** GET /api/config (auth N): plan grid, top-up pricing, per-check token costs, locales. */
export function configRoutes (fastify: FastifyInstance): void {
  fastify.withTypeProvider<ZodTypeProvider>().route({
    method: 'GET',
    url: '/api/config',
    config: { auth: 'none' },
    schema: { operationId: 'getConfig', summary: 'Plan grid, top-up pricing and per-check token costs', tags: ['Billing'], response: { 200: PublicConfig, ...problems() } },
    handler: async () => ({
      plans: PLANS.map(p => ({
        code: p.code,
        name: p.name,
        monthly_price_cents: p.monthly_price_cents,
        currency: p.currency,
        tokens_granted: p.tokens_granted,
        limits: { api_keys: p.max_api_keys, agents: p.max_agents, webhooks: p.max_webhooks, max_batch_size: p.max_batch_size, rate_limit_per_minute: p.rate_limit_per_minute },
        allowed_checks: [...p.allowed_checks],
        agent_scopes: [...p.agent_scopes]
      })),
      top_up: { available: false, packs: [] },
      checks: CHECK_NAMES.map(name => ({ name, cost: CHECK_COSTS[name] })),
      check_costs: { ...CHECK_COSTS },
      default_checks: [...CHECK_NAMES],
      scopes: [...SCOPES],
      locales: [...SUPPORTED_LOCALES]
    })
  })
}
