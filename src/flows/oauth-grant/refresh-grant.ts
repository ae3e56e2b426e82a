import { DomainError } from '../../domain/shared.ts'
import type { CommandContext } from '../../commands/context.ts'
import { refresh } from '../../commands/session/refresh.ts'
import type { SignedIn } from '../../commands/session/start-session.ts'
import { OAuthError } from '../../domain/oauth/oauth-error.ts'

/**
 * POST /oauth/token `refresh_token` (RFC 6749 §6): the grant's refresh token, rotated (a
 * spent one presented again revokes the grant: the session decider's reuse detection), for
 * the client it was issued to.
 * @throws OAuthError `invalid_request`, `invalid_grant` (400).
 */
export async function refreshGrant(ctx: CommandContext, input: { refresh_token?: string; client_id?: string }): Promise<SignedIn> {
  if (!input.refresh_token || !input.client_id) throw new OAuthError('invalid_request', 'refresh_token and client_id are required')
  try {
    return await refresh(ctx, input.refresh_token, input.client_id)
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'unauthorized') throw new OAuthError('invalid_grant', err.message)
    throw err
  }
}
