import { randomBytes } from 'node:crypto'
import { DomainError } from '../../domain/shared.ts'
import type { AgentCreated } from '../../domain/agent/events.ts'
import { isScope, type Scope } from '../../domain/api-key/scopes.ts'
import { planOf } from '../../projections/subscriptions.ts'
import { sha256Hex } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../context.ts'
import { agents } from './aggregate.ts'

/** Prefix of agent tokens; distinct from API keys (`svc_`, `svc_test_`). */
export const AGENT_TOKEN_PREFIX = 'sva_'

export interface CreatedAgent {
  agent_uuid: string
  /** What the agent was created with (its AgentCreated event). */
  agent: AgentCreated['data']
  token: string
  position: number
}

/**
 * POST /api/agents: creates an agent with a name and granted scopes on the account's
 * `agents-<user>` stream and issues its bearer token (`sva_` + 32 random bytes,
 * base64url), returned once; only its SHA-256 is kept. How an agent token is issued is
 * left open by the interface (section 5); this is our answer.
 * Reads the plan from the `subscriptions` read model: safe because a plan only widens or
 * narrows caps between billing events, seconds apart at most from the stream, and every
 * cap is decided again on the aggregate's own stream at the append (a stale plan admits
 * at most what the plan allowed a moment ago; nothing is spent or granted on it).
 * @throws DomainError invalid `create_agent.invalid_name` (1–100 characters after trimming),
 *   `create_agent.invalid_scopes` (empty or unknown scopes); forbidden
 *   `create_agent.scope_not_allowed` (the plan's `allowed_scopes`), `create_agent.limit_reached`
 *   (the plan's `max_agents` usable agents).
 */
export async function createAgent(ctx: CommandContext, input: { user_uuid: string; name: string; scopes: string[] }): Promise<CreatedAgent> {
  const name = input.name.trim()
  if (name.length < 1 || name.length > 100) throw new DomainError('invalid', 'create_agent.invalid_name', 'name must be 1 to 100 characters')
  const unknown = input.scopes.filter(s => !isScope(s))
  if (input.scopes.length === 0 || unknown.length > 0) {
    throw new DomainError(
      'invalid',
      'create_agent.invalid_scopes',
      input.scopes.length === 0 ? 'scopes must not be empty' : `unknown scopes: ${unknown.join(', ')}`
    )
  }
  const plan = await planOf(ctx, ctx.config.plans, input.user_uuid)
  const agentUuid = ctx.newId()
  const token = `${AGENT_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
  const r = await agents.handle(
    ctx,
    input.user_uuid,
    {
      type: 'CreateAgent',
      data: {
        agent_uuid: agentUuid,
        user_uuid: input.user_uuid,
        // A customer's free text: sealed with the account's data key like the address (erased with the account).
        name: await ctx.sealer.seal(input.user_uuid, name),
        scopes: [...new Set(input.scopes)] as Scope[],
        token_hash: sha256Hex(token),
        token_prefix: token.slice(0, 8),
        created_at: ctx.now().toISOString(),
        max_agents: plan.max_agents,
        plan_scopes: plan.allowed_scopes
      }
    },
    { actor: input.user_uuid }
  )
  const created = r.events.find((e): e is AgentCreated => e.type === 'AgentCreated')!.data
  return { agent_uuid: agentUuid, agent: { ...created, name }, token, position: r.position }
}
