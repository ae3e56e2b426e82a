import type { CommandContext } from '../context.ts'
import { apiKeys } from './aggregate.ts'

/**
 * Revokes one key of the account (idempotent: a revoked key, or a key that is not the
 * account's, is left as it is), by a credential of environment `by.environment`.
 * @throws DomainError forbidden `revoke_api_key.environment_not_held` (a test key and a live key).
 * @returns the global position of the revocation, or of the stream's head when nothing changed.
 */
export async function revokeApiKey(
  ctx: CommandContext,
  owner: string,
  keyUuid: string,
  by: { environment: 'live' | 'test' },
  reason: string,
  actor: string
): Promise<number> {
  const r = await apiKeys.handle(
    ctx,
    owner,
    { type: 'RevokeApiKey', data: { key_uuid: keyUuid, reason, environment: by.environment, now: ctx.now().toISOString() } },
    { actor }
  )
  return r.position
}
