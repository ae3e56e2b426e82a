import type { FastifyInstance } from 'fastify'
import { PLANS } from '../../domain/plans.ts'
import { CHECK_COSTS, CHECK_NAMES } from '../../domain/checks.ts'
import { SUPPORTED_LOCALES } from '../../domain/locales.ts'
import { SCOPES } from '../../domain/apikey/scopes.ts'

/** GET /api/config (auth N): plan grid, top-up pricing, per-check token costs, locales. */
export function configRoutes (app: FastifyInstance): void {
  app.get('/api/config', async () => ({
    plans: PLANS.map(p => ({
      code: p.code,
      name: p.name,
      monthly_price_cents: p.monthly_price_cents,
      currency: p.currency,
      tokens_granted: p.tokens_granted,
      limits: { api_keys: p.max_api_keys, agents: p.max_agents, webhooks: p.max_webhooks, max_batch_size: p.max_batch_size, rate_limit_per_minute: p.rate_limit_per_minute },
      allowed_checks: p.allowed_checks,
      agent_scopes: p.agent_scopes
    })),
    top_up: { available: false, packs: [] },
    checks: CHECK_NAMES.map(name => ({ name, cost: CHECK_COSTS[name] })),
    check_costs: CHECK_COSTS,
    default_checks: CHECK_NAMES,
    scopes: SCOPES,
    locales: SUPPORTED_LOCALES
  }))
}
