import { DomainError } from '../../domain/shared.ts'
import * as user from '../../domain/user/decider.ts'
import { issueAccessToken } from '../../lib/crypto/jwt.ts'
import { randomToken, sha256Hex } from '../../lib/crypto/hashing.ts'
import { issuersOf, type CommandContext } from '../context.ts'
import type { SignedIn } from './start-session.ts'
import { parseOwnedToken } from '../owned-token.ts'
import { sessions } from './aggregate.ts'
import { readAccount } from '../user/read.ts'

/** Splits a `svc_refresh` cookie value (`<session uuid>.<secret>`); null when malformed. */
export function parseRefreshToken(value: string): { session_uuid: string; secret: string } | null {
  const t = parseOwnedToken(value)
  return t ? { session_uuid: t.owner, secret: t.secret } : null
}

/**
 * POST /api/auth/refresh: rotates the refresh token and issues a new access token. A spent
 * token presented again revokes the whole session (reuse detection), except the token the
 * last rotation replaced within `REFRESH_TOKEN_REUSE_GRACE_S` (two tabs refreshing with the
 * same cookie at once): that one gets a new token of its own and the session stays (see
 * the session decider); a refresh for an account that may no longer sign in (banned,
 * deleted) or a session its ban voided revokes it too. Concurrent refreshes meet at the
 * stream's expected revision: the later one is decided again on the state the first left.
 * With `client_id` (the OAuth token endpoint, RFC 6749 §6), the token must be a grant of
 * that client: a sign-in session's refresh token or another client's is refused.
 * @throws DomainError unauthorized `refresh.invalid_token` (malformed, unknown, expired,
 *   revoked or reused token, inactive account, another client's).
 */
export async function refresh(ctx: CommandContext, cookie: string, clientId?: string): Promise<SignedIn> {
  const parsed = parseRefreshToken(cookie)
  if (!parsed) throw new DomainError('unauthorized', 'refresh.invalid_token', 'malformed refresh token')
  const { state: current } = await sessions.load(ctx, parsed.session_uuid)
  if (current.status === 'none')
    throw new DomainError('unauthorized', 'refresh.invalid_token', 'the refresh token is invalid, expired or revoked; sign in again')
  if (clientId !== undefined && current.grant?.client_id !== clientId)
    throw new DomainError('unauthorized', 'refresh.invalid_token', 'the refresh token was not issued to this client')
  const { state: account } = await readAccount(ctx, current.user_uuid)
  const now = ctx.now()
  const secret = randomToken(32)
  const expires = new Date(now.getTime() + ctx.config.refresh_token_ttl_s * 1000)
  const r = await sessions.handle(ctx, parsed.session_uuid, {
    type: 'Refresh',
    data: {
      session_uuid: parsed.session_uuid,
      presented_hash: sha256Hex(parsed.secret),
      new_hash: sha256Hex(secret),
      expires_at: expires.toISOString(),
      now: now.toISOString(),
      grace_ms: ctx.config.refresh_token_reuse_grace_s * 1000,
      account: { active: user.isActive(account), sessions_valid_from: account.status === 'none' ? null : (account.sessions_valid_from ?? null) }
    }
  })
  if (r.state.status !== 'active') throw new DomainError('unauthorized', 'refresh.invalid_token', 'this session is revoked; sign in again')
  return {
    // An OAuth grant's tokens stay bound to its client and scopes, whichever endpoint refreshes them.
    access_token: await issueAccessToken(
      ctx.secrets,
      issuersOf(ctx),
      { user_uuid: r.state.user_uuid, session_uuid: parsed.session_uuid, grant: r.state.grant ?? null },
      ctx.config.access_token_ttl_s,
      now
    ),
    token_type: 'Bearer',
    expires_in: ctx.config.access_token_ttl_s,
    refresh_token: `${parsed.session_uuid}.${secret}`,
    refresh_expires_at: expires,
    session_uuid: parsed.session_uuid,
    user_uuid: r.state.user_uuid,
    position: r.position,
    grant: r.state.grant ?? null
  }
}
