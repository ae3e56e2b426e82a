import type { Flow } from '../../eventsourcing/flow.ts'
import * as claim from '../../domain/claim/decider.ts'
import type { CommandContext } from '../../commands/context.ts'
import { handle, load } from '../../eventsourcing/command-handler.ts'
import { agents } from '../../commands/agent/aggregate.ts'
import { apiKeys } from '../../commands/api-key/aggregate.ts'
import { users } from '../../commands/user/aggregate.ts'
import { webhooks } from '../../commands/webhook/aggregate.ts'
import { emailClaimStream } from '../../commands/user/shared/email-claims.ts'
import { react, type ErasureCommand, type ErasureState } from './react.ts'

/** The account's address, unsealed: null once its data key is destroyed (or it never had one). */
async function addressOf(ctx: CommandContext, owner: string): Promise<string | null> {
  const { state } = await users.load(ctx, owner)
  if (state.status === 'none' || !('email' in state) || typeof state.email !== 'string') return null
  return await ctx.sealer.unseal(owner, state.email)
}

/**
 * An account's deletion finishes from its committed event (six
 * streams and the data key were changed inline after UserDeleted, and a crash between left
 * keys working or the address unreleasable). Trigger: UserDeleted (which voids the
 * account's sessions itself). Steps: `api_keys` (RevokeAllApiKeys on `apikeys-<user>`),
 * `agents` (RevokeAllAgents on `agents-<user>`), `webhooks` (DeleteAllWebhooks on
 * `webhooks-<user>`), `release` (ReleaseValue on the address's claim stream), `shred` (the
 * data key destroyed): each idempotent on its own stream, the state read again before each
 * round. Bound: a minute. Cost: the account's keys, agents and endpoints (plan caps).
 */
export const deleteAccountFlow: Flow<CommandContext, ErasureState, ErasureCommand> = {
  name: 'delete-account',
  prefix: 'delete',
  triggers: ['UserDeleted'],
  steps: ['api_keys', 'agents', 'webhooks', 'release', 'shred'],
  bound_ms: 60_000,
  load: async (ctx, trigger) => {
    const owner = String(trigger.data.user_uuid)
    const [account, keys, agent, hooks, email] = await Promise.all([
      users.load(ctx, owner),
      apiKeys.load(ctx, owner),
      agents.load(ctx, owner),
      webhooks.load(ctx, owner),
      addressOf(ctx, owner)
    ])
    const claimed = email !== null && (await load(ctx, emailClaimStream(ctx, email), claim)).state.owner_uuid === owner
    return {
      deleted: account.state.status === 'deleted',
      api_keys: keys.state.usable.size > 0,
      agents: agent.state.usable.size > 0,
      webhooks: hooks.state.endpoints.size > 0,
      claimed,
      keyed: email !== null
    }
  },
  react,
  execute: async (ctx, step, meta) => {
    const c = step.command
    const owner = c.user_uuid
    const now = ctx.now().toISOString()
    const m = { actor: meta.actor, causation_id: meta.causation_id, correlation_id: meta.correlation_id }
    if (c.type === 'RevokeAllApiKeys') await apiKeys.handle(ctx, owner, { type: 'RevokeAllApiKeys', data: { reason: 'account_deleted', now } }, m)
    else if (c.type === 'RevokeAllAgents') await agents.handle(ctx, owner, { type: 'RevokeAllAgents', data: { reason: 'account_deleted', now } }, m)
    else if (c.type === 'DeleteAllWebhooks') await webhooks.handle(ctx, owner, { type: 'DeleteAllWebhooks', data: { now } }, m)
    else if (c.type === 'ReleaseClaim') {
      const email = await addressOf(ctx, owner)
      if (email !== null) await handle(ctx, emailClaimStream(ctx, email), claim, { type: 'ReleaseValue', data: { owner_uuid: owner, now } }, m)
    } else await ctx.sealer.destroyKey(owner)
  }
}
