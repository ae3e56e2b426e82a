import type { PlanCatalogue } from '../domain/plans.ts'
import { planFor } from '../domain/plans.ts'
import type { ReadContext } from './read-context.ts'
import { getUser } from './users.ts'
import { subscriptionOf } from './subscriptions.ts'
import { getWallet } from './wallets.ts'
import { apiKeysOf } from './api-keys.ts'
import { agentsOf } from './agents.ts'
import { openSessions } from './sessions.ts'

/** What an operator sees of an account (`svc accounts show`): nothing secret, no hash, no token. */
export interface AccountSummary {
  user_uuid: string
  email: string
  status: 'unconfirmed' | 'confirmed' | 'banned'
  locale: string
  two_factor_enabled: boolean
  created_at: string
  confirmed_at: string | null
  plan: { code: string; subscription_status: string; cycle: string | null; current_period_end: string | null; limits_plan: string }
  wallet: { balance: number; reserved: number; spent: number }
  keys: Array<{ uuid: string; name: string; environment: string; key_prefix: string; scopes: string[]; created_at: string; revoked_at: string | null }>
  agents: { usable: number; total: number }
  sessions: Array<{ uuid: string; method: string; client_id: string | null; started_at: string; last_used_at: string; expires_at: string }>
}

/**
 * The account `owner` as an operator may see it, from the read models: its profile, plan,
 * wallet, keys (names opened; prefixes, never hashes), agents counted and open sessions.
 * Cost: one read per read model, the account's keys (bounded by the plan's cap) and open
 * sessions (bounded by the session lifetime), and the first 96 agents.
 * @returns null when no such account is in the read models.
 */
export async function accountSummary(rc: ReadContext, catalogue: PlanCatalogue, owner: string): Promise<AccountSummary | null> {
  const user = await getUser(rc, owner)
  if (user === null) return null
  const [subscription, wallet, keys, agents, sessions] = await Promise.all([
    subscriptionOf(rc, owner),
    getWallet(rc, owner),
    apiKeysOf(rc, owner),
    agentsOf(rc, owner, { limit: 96, offset: 0 }),
    openSessions(rc, owner)
  ])
  return {
    user_uuid: owner,
    email: user.email,
    status: user.banned ? 'banned' : user.status,
    locale: user.locale,
    two_factor_enabled: user.two_factor_enabled,
    created_at: user.created_at,
    confirmed_at: user.confirmed_at,
    plan: {
      code: planFor(catalogue, subscription.subscribed_plan).code,
      subscription_status: subscription.status,
      cycle: subscription.cycle,
      current_period_end: subscription.current_period_end,
      limits_plan: subscription.plan
    },
    wallet: { balance: wallet?.balance ?? 0, reserved: wallet?.reserved ?? 0, spent: wallet?.spent ?? 0 },
    keys: keys.map(k => ({
      uuid: k.uuid,
      name: k.name,
      environment: k.environment,
      key_prefix: k.key_prefix,
      scopes: k.scopes,
      created_at: k.created_at,
      revoked_at: k.revoked_at
    })),
    agents: { usable: agents.items.filter(a => a.revoked_at === null).length, total: agents.total },
    sessions: sessions.map(s => ({
      uuid: s.uuid,
      method: s.method,
      client_id: s.client_id ?? null,
      started_at: s.started_at,
      last_used_at: s.last_used_at,
      expires_at: s.expires_at
    }))
  }
}
