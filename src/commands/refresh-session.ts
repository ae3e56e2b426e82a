import { DomainError } from '../domain/shared.ts'
import * as session from '../domain/session/decider.ts'
import * as user from '../domain/user/decider.ts'
import { issueAccessToken } from '../infra/crypto/jwt.ts'
import { randomToken, sha256Hex } from '../infra/crypto/hashing.ts'
import { handle, load, type CommandContext } from './context.ts'
import type { SignedIn } from './start-session.ts'
import { parseOwnedToken } from './owned-token.ts'
import { openSessions } from '../projections/sessions.ts'

/** Splits a `svc_refresh` cookie value (`<session uuid>.<secret>`); null when malformed. */
export function parseRefreshToken (value: string): { session_uuid: string, secret: string } | null {
  const t = parseOwnedToken(value)
  return t ? { session_uuid: t.owner, secret: t.secret } : null
}

/**
 * POST /api/auth/refresh: rotates the refresh token and issues a new access token. A spent
 * token presented again revokes the whole session (reuse detection); so does a refresh for
 * an account that may no longer sign in (banned, deleted) or a session its ban voided.
 * @throws DomainError unauthorized `refresh.invalid_token` (malformed, unknown, expired,
 *   revoked or reused token, inactive account).
 */
export async function refreshSession (ctx: CommandContext, cookie: string): Promise<SignedIn> {
  const parsed = parseRefreshToken(cookie)
  if (!parsed) throw new DomainError('unauthorized', 'refresh.invalid_token', 'malformed refresh token')
  const stream = `session-${parsed.session_uuid}`
  const { state: current } = await load(ctx, stream, session)
  if (current.status === 'none') throw new DomainError('unauthorized', 'refresh.invalid_token', 'the refresh token is invalid, expired or revoked; sign in again')
  const { state: account } = await load(ctx, `user-${current.user_uuid}`, user)
  const now = ctx.now()
  const secret = randomToken(32)
  const expires = new Date(now.getTime() + ctx.config.refresh_token_ttl_s * 1000)
  const r = await handle(ctx, stream, session, {
    type: 'RefreshSession',
    data: {
      session_uuid: parsed.session_uuid,
      presented_hash: sha256Hex(parsed.secret),
      new_hash: sha256Hex(secret),
      expires_at: expires.toISOString(),
      now: now.toISOString(),
      account: { active: user.isActive(account), sessions_valid_from: account.status === 'none' ? null : account.sessions_valid_from ?? null }
    }
  })
  if (r.state.status !== 'active') throw new DomainError('unauthorized', 'refresh.invalid_token', 'this session is revoked; sign in again')
  return {
    access_token: await issueAccessToken(ctx.secrets, ctx.config.jwt_issuer, { user_uuid: r.state.user_uuid, session_uuid: parsed.session_uuid }, ctx.config.access_token_ttl_s, now),
    token_type: 'Bearer',
    expires_in: ctx.config.access_token_ttl_s,
    refresh_token: `${parsed.session_uuid}.${secret}`,
    refresh_expires_at: expires,
    session_uuid: parsed.session_uuid,
    position: r.position
  }
}

/**
 * Ends a session (logout, or its owner revoking it). Idempotent. With `owner`, the session
 * must belong to that user; with `presentedSecret` (logout by cookie), it must be the
 * session's current refresh token, or nothing changes.
 * @throws DomainError not_found `revoke_session.not_found`; forbidden `revoke_session.not_owner`.
 */
export async function revokeSession (ctx: CommandContext, sessionUuid: string, reason: 'logout' | 'revoked', owner?: string, presentedSecret?: string): Promise<number> {
  const r = await handle(ctx, `session-${sessionUuid}`, session, (state: session.SessionState) => {
    if (state.status === 'none') throw new DomainError('not_found', 'revoke_session.not_found', 'no such session')
    if (owner !== undefined && state.user_uuid !== owner) throw new DomainError('forbidden', 'revoke_session.not_owner', 'this session belongs to another account')
    return { type: 'RevokeSession' as const, data: { session_uuid: sessionUuid, reason, ...(presentedSecret !== undefined && { presented_hash: sha256Hex(presentedSecret) }), now: ctx.now().toISOString() } }
  }, { actor: owner ?? null })
  return r.position
}

/**
 * Revokes every active session of `owner` except `keep` (password change and reset).
 * @returns the global position of the last revocation (0 when there was none).
 */
export async function revokeAllSessions (ctx: CommandContext, owner: string, keep: string | null): Promise<number> {
  const items = await openSessions(ctx, owner)
  let position = 0
  for (const s of items) if (s.uuid !== keep) position = Math.max(position, await revokeSession(ctx, s.uuid, 'revoked'))
  return position
}
