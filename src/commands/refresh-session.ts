import { DomainError } from '../domain/shared.ts'
import * as session from '../domain/session/decider.ts'
import * as user from '../domain/user/decider.ts'
import { issueAccessToken } from '../infra/crypto/jwt.ts'
import { randomToken, sha256Hex, verifyPassword } from '../infra/crypto/hashing.ts'
import { startPasswordCheck } from './password-check.ts'
import { factorOf } from './two-factor.ts'
import { handle, load, type CommandContext } from './context.ts'
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
 * POST /api/users/me/sessions/end-others: after the account's every factor (the password,
 * and with two-factor on a code: ASVS 5.0 V7.5.2), ends every session but the caller's.
 * The password check counts towards the account's lock.
 * @throws DomainError invalid `end_sessions.wrong_password`, `end_sessions.second_factor_required`,
 *   `end_sessions.invalid_code`; locked `end_sessions.locked`; not_found `end_sessions.not_found`.
 * @returns how many sessions ended and the global position of the last revocation.
 */
export async function endOtherSessions (ctx: CommandContext, owner: string, current: string | null, input: { password: string, code?: string }): Promise<{ sessions_ended: number, position: number }> {
  const { state } = await load(ctx, `user-${owner}`, user)
  if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'end_sessions.not_found', 'no such user')
  await startPasswordCheck(ctx, owner, 'end_sessions')
  const [passwordOk, factor] = await Promise.all([verifyPassword(state.password_hash, input.password), factorOf(ctx, state, input.code)])
  const r = await handle(ctx, `user-${owner}`, user, { type: 'Reauthenticate', data: { operation: 'end_sessions', password_ok: passwordOk, for_password_hash: state.password_hash, factor, now: ctx.now().toISOString() } }, { actor: owner })
  if (user.refusedSecondFactor(r.events)) throw new DomainError('invalid', 'end_sessions.invalid_code', 'the code is wrong or was already used')
  const others = (await openSessions(ctx, owner)).filter(s => s.uuid !== current).length
  return { sessions_ended: others, position: Math.max(r.position, await revokeAllSessions(ctx, owner, current, owner)) }
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
