import type { CommandContext } from '../context.ts'
import { agents } from './aggregate.ts'

/**
 * DELETE /api/agents/{uuid}: revokes the agent (idempotent: a revoked agent, or one that
 * is not the account's, is left as it is).
 * @returns the global position of the revocation (or of the stream's head when nothing changed).
 */
export async function revokeAgent(ctx: CommandContext, owner: string, agentUuid: string, reason = 'revoked'): Promise<number> {
  const r = await agents.handle(ctx, owner, { type: 'RevokeAgent', data: { agent_uuid: agentUuid, reason, now: ctx.now().toISOString() } }, { actor: owner })
  return r.position
}
