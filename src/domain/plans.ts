import { CHECK_NAMES, type CheckName } from './checks.ts'
import type { Scope } from './apikey/scopes.ts'

/** A subscription plan: its grant of tokens and the caps it puts on an account. */
export interface Plan {
  code: string
  name: string
  /** Price per month in cents of `currency` (0 for Free). */
  monthly_price_cents: number
  currency: string
  /** Tokens granted when the plan starts (Free: on confirmation). */
  tokens_granted: number
  max_api_keys: number
  max_agents: number
  max_webhooks: number
  /** Unique valid addresses per batch, cumulative across chunks. */
  max_batch_size: number
  /** Requests per minute seeded into each API key. */
  rate_limit_per_minute: number
  allowed_checks: readonly CheckName[]
  /**
   * Scopes an agent may be granted (interface section 5: a scope not allowed for the plan
   * is refused at agent creation with 403).
   */
  agent_scopes: readonly Scope[]
}

export const FREE_PLAN: Plan = {
  code: 'free',
  name: 'Free',
  monthly_price_cents: 0,
  currency: 'usd',
  tokens_granted: 1_000,
  max_api_keys: 5,
  max_agents: 2,
  max_webhooks: 2,
  max_batch_size: 1_000,
  rate_limit_per_minute: 60,
  allowed_checks: CHECK_NAMES,
  // Free agents verify and read; managing keys and webhooks from an agent needs a paid plan.
  agent_scopes: ['email:verify:single', 'email:verify:bulk', 'results:read', 'usage:read', 'billing:read', 'api_keys:read', 'webhooks:read']
}

export const PLANS: readonly Plan[] = [FREE_PLAN]
