import { sha256Hex } from '../../lib/crypto/hashing.ts'
import { verifyAccessToken } from '../../lib/crypto/jwt.ts'
import { issuersOf, type CommandContext } from '../../commands/context.ts'
import { parseRefreshToken } from '../../commands/session/refresh.ts'
import { revokeSession } from '../../commands/session/revoke-session.ts'
import { OAuthError } from '../../domain/oauth/oauth-error.ts'
import { sessions } from '../../commands/session/aggregate.ts'
import { knowsRefreshToken } from '../../domain/session/decider.ts'

/**
 * POST /oauth/revoke (RFC 7009): a refresh or access token of a grant of `client_id` ends
 * the grant (its other tokens too). An unknown, invalid or another client's token changes
 * nothing, and the answer is the same (§2.2).
 * @returns the global position of the revocation (0 when nothing changed).
 */
export async function revokeToken(ctx: CommandContext, input: { token?: string; client_id?: string }): Promise<number> {
  if (!input.token || !input.client_id) throw new OAuthError('invalid_request', 'token and client_id are required')
  const access = await verifyAccessToken(ctx.secrets, issuersOf(ctx), input.token)
  const sessionUuid = access ? access.session_uuid : parseRefreshToken(input.token)?.session_uuid
  if (!sessionUuid || (access && access.grant?.client_id !== input.client_id)) return 0
  const { state } = await sessions.load(ctx, sessionUuid)
  if (state.status !== 'active' || state.grant?.client_id !== input.client_id) return 0
  // A refresh token revokes only when it is the grant's current or a recent one (its secret, not its id alone).
  if (!access && !refreshTokenOf(state, input.token)) return 0
  return await revokeSession(ctx, sessionUuid, 'revoked', undefined, undefined, `oauth-client:${input.client_id}`)
}

function refreshTokenOf(state: Parameters<typeof knowsRefreshToken>[0], token: string): boolean {
  const secret = parseRefreshToken(token)?.secret
  return secret !== undefined && knowsRefreshToken(state, sha256Hex(secret))
}
