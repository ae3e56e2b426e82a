import { DomainError } from '../domain/shared.ts'
import * as session from '../domain/session/decider.ts'
import * as user from '../domain/user/decider.ts'
import { issueAccessToken } from '../lib/crypto/jwt.ts'
import { randomToken, sha256Hex } from '../lib/crypto/hashing.ts'
import { issuersOf, type CommandContext } from './context.ts'
import { handle, load } from './command-handler.ts'
import type { SignedIn } from './start-session.ts'
import { parseOwnedToken } from './owned-token.ts'
import { openSessions, openSessionsStarted, openSessionsStartedAt } from '../projections/sessions.ts'

/** Splits a `svc_refresh` cookie value (`<session uuid>.<secret>`); null when malformed. */
export function parseRefreshToken (value: string): { session_uuid: string, secret: string } | null {
  const t = parseOwnedToken(value)
  return t ? { session_uuid: t.owner, secret: t.secret } : null
}

/**
 * POST /api/auth/refresh: rotates the refresh token and issues a new access token. A spent
 * token presented again revokes the whole session (reuse detection); so does a refresh for
 * an account that may no longer sign in (banned, deleted) or a session its ban voided.
 * With `client_id` (the OAuth token endpoint, RFC 6749 §6), the token must be a grant of
 * that client: a sign-in session's refresh token or another client's is refused.
 * @throws DomainError unauthorized `refresh.invalid_token` (malformed, unknown, expired,
 *   revoked or reused token, inactive account, another client's).
 */
export async function refreshSession (ctx: CommandContext, cookie: string, clientId?: string): Promise<SignedIn> {
  const parsed = parseRefreshToken(cookie)
  if (!parsed) throw new DomainError('unauthorized', 'refresh.invalid_token', 'malformed refresh token')
  const stream = `session-${parsed.session_uuid}`
  const { state: current } = await load(ctx, stream, session)
  if (current.status === 'none') throw new DomainError('unauthorized', 'refresh.invalid_token', 'the refresh token is invalid, expired or revoked; sign in again')
  if (clientId !== undefined && current.grant?.client_id !== clientId) throw new DomainError('unauthorized', 'refresh.invalid_token', 'the refresh token was not issued to this client')
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
    // An OAuth grant's tokens stay bound to its client and scopes, whichever endpoint refreshes them.
    access_token: await issueAccessToken(ctx.secrets, issuersOf(ctx), { user_uuid: r.state.user_uuid, session_uuid: parsed.session_uuid, grant: r.state.grant ?? null }, ctx.config.access_token_ttl_s, now),
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

/**
 * Ends a session (logout, or its owner revoking it). Idempotent. With `owner`, the session
 * must belong to that user; with `presentedSecret` (logout by cookie), it must be the
 * session's current refresh token, or nothing changes.
 * @throws DomainError not_found `revoke_session.not_found`; forbidden `revoke_session.not_owner`.
 */
export async function revokeSession (ctx: CommandContext, sessionUuid: string, reason: 'logout' | 'revoked', owner?: string, presentedSecret?: string, actor?: string): Promise<number> {
  const r = await handle(ctx, `session-${sessionUuid}`, session, (state: session.SessionState) => {
    if (state.status === 'none') throw new DomainError('not_found', 'revoke_session.not_found', 'no such session')
    if (owner !== undefined && state.user_uuid !== owner) throw new DomainError('forbidden', 'revoke_session.not_owner', 'this session belongs to another account')
    return { type: 'RevokeSession' as const, data: { session_uuid: sessionUuid, reason, ...(presentedSecret !== undefined && { presented_hash: sha256Hex(presentedSecret) }), now: ctx.now().toISOString() } }
  }, { actor: actor ?? owner ?? null })
  return r.position
}

/**
 * Revokes every active session of `owner` except `keep` (password change and reset, a
 * change of factors, a ban, an operator). Cost: the account's open sessions.
 * @returns the global position of the last revocation (0 when there was none).
 */
export async function revokeAllSessions (ctx: CommandContext, owner: string, keep: string | null, actor?: string): Promise<number> {
  const items = await openSessions(ctx, owner)
  let position = 0
  for (const s of items) if (s.uuid !== keep) position = Math.max(position, await revokeSession(ctx, s.uuid, 'revoked', undefined, undefined, actor))
  return position
}

/**
 * `svc sessions end --all` (ASVS 5.0 V7.4.5): ends every session open when it starts, page
 * by page (oldest first, keyset on `started_at`), reporting progress. Sessions started
 * after it began are left alone. Cost: the open sessions, PAGE at a time in memory.
 * @returns how many sessions it ended.
 */
export async function endAllSessions (ctx: CommandContext, actor: string, onProgress: (ended: number) => void = () => {}): Promise<{ sessions_ended: number }> {
  const PAGE = 500
  const before = ctx.now().toISOString()
  let cursor = ''
  const done = new Set<string>()
  let ended = 0
  const end = async (s: { uuid: string, started_at: string }): Promise<void> => {
    if (s.started_at !== cursor) { cursor = s.started_at; done.clear() }
    if (done.has(s.uuid)) return
    await revokeSession(ctx, s.uuid, 'revoked', undefined, undefined, actor).catch(err => { if (!(err instanceof DomainError)) throw err })
    done.add(s.uuid)
    ended++
  }
  for (;;) {
    // The read model may still show sessions ended a moment ago: those of the cursor's instant are remembered (`done`).
    const page = await openSessionsStarted(ctx, { from: cursor, to: before, limit: PAGE })
    const fresh = page.filter(s => !(s.started_at === cursor && done.has(s.uuid)))
    if (fresh.length === 0 && page.length === PAGE) {
      // A full page of one instant, all ended already: walk that instant's sessions by id.
      let from = ''
      for (;;) {
        const tie = await openSessionsStartedAt(ctx, { at: cursor, id_from: from, limit: PAGE })
        for (const s of tie) await end(s)
        if (tie.length < PAGE) break
        from = tie[tie.length - 1].uuid
      }
      // Then past that instant.
      cursor = `${cursor}\u0000`
      done.clear()
      continue
    }
    if (fresh.length === 0) return { sessions_ended: ended }
    for (const s of fresh) await end(s)
    onProgress(ended)
  }
}
