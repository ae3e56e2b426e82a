import t from 'tap'
import * as session from '../../../src/domain/session/decider.ts'
import type { AccountStanding, SessionCommand } from '../../../src/domain/session/decider.ts'
import type { SessionRefreshed, SessionRevoked, SessionStarted } from '../../../src/domain/session/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// A signed-in session (stream `session-<uuid>`). Interface section 4: POST /api/auth/refresh
// "401 refresh token invalid, expired, or user gone", logout "refresh token revoked (or none
// present) ... idempotent", DELETE /api/users/me/sessions/{uuid} "also invalidates its
// refresh token"; section 5.6: "refresh rotates it ... logout revokes it". Rotation and reuse
// detection: OAuth 2.0 Security BCP (RFC 9700 §4.14, refresh token rotation: a refresh token
// presented again after rotation reveals a breach, and the active one is revoked); absolute lifetime: OWASP ASVS 5.0 V7.3.2.

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'
const month = '2026-12-22T10:00:00.000Z'
const day = (n: number): string => new Date(Date.parse(now) + n * 86_400_000).toISOString()
const ok: AccountStanding = { active: true, sessions_valid_from: null }

// Event builders.
const started = build<SessionStarted>('SessionStarted', {
  session_uuid: 's1',
  user_uuid: U,
  refresh_hash: 'h1',
  expires_at: month,
  started_at: now,
  method: 'password'
})
const refreshed = build<SessionRefreshed>('SessionRefreshed', { session_uuid: 's1', user_uuid: U, refresh_hash: 'h2', expires_at: month, refreshed_at: now })
const revoked = build<SessionRevoked>('SessionRevoked', { session_uuid: 's1', user_uuid: U, reason: 'logout', revoked_at: now })

// Command builders.
const refresh = (presented: string, next: string, over: { expires_at?: string; now?: string; account?: AccountStanding } = {}): SessionCommand => ({
  type: 'RefreshSession',
  data: { session_uuid: 's1', presented_hash: presented, new_hash: next, expires_at: month, now, account: ok, ...over }
})
const revoke = (reason: SessionRevoked['data']['reason'], presented?: string): SessionCommand => ({
  type: 'RevokeSession',
  data: { session_uuid: 's1', reason, ...(presented !== undefined && { presented_hash: presented }), now }
})

t.test('StartSession', async t => {
  const s = spec(t, session)
  const client = { id: 'hmac-of-client', label: 'Firefox on Linux' }
  s([])
    .when({ type: 'StartSession', data: started({ client }).data })
    .then([started({ client })], 'a session starts with the hash of its refresh token and its client')
  s([started()]).when({ type: 'StartSession', data: started().data }).thenRejects('session.exists', 409, 'a session is started once')
})

t.test('RefreshSession: rotation and reuse detection', async t => {
  const s = spec(t, session)
  s([started()]).when(refresh('h1', 'h2')).then([refreshed()], 'the current token is spent for a new one')
  s([started(), refreshed()])
    .when(refresh('h2', 'h3'))
    .then([refreshed({ refresh_hash: 'h3' })], 'the new token is the one that refreshes next')
  s([started(), refreshed()])
    .when(refresh('h1', 'h3', { expires_at: now }))
    .then([revoked({ reason: 'refresh_token_reuse' })], 'a spent token revokes the session (RFC 9700 §4.14)')
  s([started(), refreshed(), refreshed({ refresh_hash: 'h3' }), refreshed({ refresh_hash: 'h4' })])
    .when(refresh('h2', 'h5'))
    .then([revoked({ reason: 'refresh_token_reuse' })], 'any remembered spent token, not only the latest, revokes it')
  s([started()])
    .when(refresh('nope', 'h3', { expires_at: now }))
    .thenRejects('refresh.invalid_token', 401, 'an unknown token is invalid (401)')
  s([started()])
    .when(refresh('h1', 'h3', { expires_at: now, now: '2027-01-01T00:00:00.000Z' }))
    .thenRejects('refresh.invalid_token', 401, 'an expired token is invalid (401)')
  s([started()])
    .when(refresh('h1', 'h3', { now: month }))
    .thenRejects('refresh.invalid_token', 401, 'a token is expired from its expires_at on')
  s([]).when(refresh('h1', 'h2')).thenRejects('refresh.invalid_token', 401, 'no such session: invalid (401)')
  s([started(), revoked()])
    .when(refresh('h1', 'h3', { expires_at: now }))
    .thenRejects('refresh.invalid_token', 401, "a revoked session's token is invalid")
  s([started(), refreshed(), revoked({ reason: 'refresh_token_reuse' })])
    .when(refresh('h1', 'h3'))
    .thenRejects('refresh.invalid_token', 401, 'a revoked session is not revoked again by a spent token')
  const many = Array.from({ length: session.SPENT_MEMORY + 1 }, (_, i) => refreshed({ refresh_hash: `n${i}` }))
  s([started(), ...many]).thenState(st => st.status !== 'none' && st.spent.length, session.SPENT_MEMORY, 'spent tokens remembered are bounded')
  s([started(), ...many])
    .when(refresh('n0', 'x'))
    .then([revoked({ reason: 'refresh_token_reuse' })], 'the oldest remembered spent token still revokes')
  s([started(), ...many])
    .when(refresh('h1', 'x'))
    .thenRejects('refresh.invalid_token', 401, 'a spent token older than the memory is simply invalid')
})

t.test("RefreshSession: the account's standing and the absolute lifetime", async t => {
  const s = spec(t, session)
  s([started()])
    .when(refresh('h1', 'h3', { expires_at: now, account: { active: false, sessions_valid_from: now } }))
    .then([revoked({ reason: 'account_inactive' })], 'a banned or deleted account\'s refresh revokes the session ("user gone": 401 by the caller)')
  s([started()])
    .when(refresh('h1', 'h3', { expires_at: now, account: { active: true, sessions_valid_from: '2026-11-22T11:00:00.000Z' } }))
    .then([revoked({ reason: 'account_inactive' })], 'a session started before a ban stays void after the unban')
  s([started()])
    .when(refresh('h1', 'h2', { account: { active: true, sessions_valid_from: '2026-11-22T09:00:00.000Z' } }))
    .then([refreshed()], 'a session started after the ban was lifted refreshes')
  // Instants, not text (RFC 3339 §5.6 offsets): 11:30+02:00 is 09:30Z, before a ban at 10:00Z; 09:30-02:00 is 11:30Z, after it.
  s([started({ started_at: '2026-11-22T11:30:00.000+02:00' })])
    .when(refresh('h1', 'h3', { expires_at: now, account: { active: true, sessions_valid_from: now } }))
    .then([revoked({ reason: 'account_inactive' })], 'a session started at 11:30+02:00 began before a ban at 10:00Z (as text it sorts after it)')
  s([started({ started_at: '2026-11-22T09:30:00.000-02:00' })])
    .when(refresh('h1', 'h2', { account: { active: true, sessions_valid_from: now } }))
    .then([refreshed()], 'a session started at 09:30-02:00 began after it (as text it sorts before it)')
  s([started({ expires_at: '2026-11-22T11:00:00.000+02:00' })])
    .when(refresh('h1', 'h3'))
    .thenRejects('refresh.invalid_token', 401, 'a token that expired at 11:00+02:00 (09:00Z) is expired at 10:00Z')
  // Refreshed every day, a session still ends SESSION_MAX_LIFETIME_MS (90 days) after it started.
  const lateRefresh = refreshed({ refresh_hash: 'h9', expires_at: day(119), refreshed_at: day(89) })
  s([started(), lateRefresh])
    .when(refresh('h9', 'h10', { expires_at: day(120), now: day(90) }))
    .then([revoked({ reason: 'lifetime_reached', revoked_at: day(90) })], 'past its lifetime it is revoked')
  s([started(), lateRefresh])
    .when(refresh('h9', 'h10', { expires_at: day(119), now: day(89) }))
    .then([refreshed({ refresh_hash: 'h10', expires_at: day(90), refreshed_at: day(89) })], 'a refresh never reaches past the lifetime')
  t.equal(session.SESSION_MAX_LIFETIME_MS, 90 * 86_400_000, 'the absolute lifetime is 90 days')
})

t.test('RevokeSession: logout and revocation by the owner', async t => {
  const s = spec(t, session)
  s([started(), revoked()]).when(revoke('logout')).thenNothing('logout is idempotent')
  s([started()]).when(revoke('logout', 'not h1')).thenNothing('a logout without the current refresh token changes nothing')
  s([started()]).when(revoke('logout', 'h1')).then([revoked()], 'with it, the session ends')
  s([started(), refreshed()]).when(revoke('logout', 'h1')).thenNothing('a spent token does not log the session out')
  s([started()])
    .when(revoke('revoked'))
    .then([revoked({ reason: 'revoked' })], 'its owner revokes it from the session list (no token needed)')
  s([]).when(revoke('logout')).thenNothing('no such session: nothing')
  s([started(), revoked({ reason: 'revoked' })]).thenState(st => st.status, 'revoked', 'a revoked session stays revoked')
})

t.test('snapshots: the session carried forward', async t => {
  const s = spec(t, session)
  const snap = session.takeSnapshot([started(), refreshed()].reduce(session.evolve, session.initialState()), now)
  t.same(
    snap.data.state,
    { status: 'active', user_uuid: U, started_at: now, refresh_hash: 'h2', spent: ['h1'], expires_at: month, grant: null },
    'the snapshot holds the whole state'
  )
  const grant = { client_id: 'c-1', scopes: ['results:read'] }
  const oauth = [started({ method: 'oauth', grant }), refreshed()].reduce(session.evolve, session.initialState())
  t.same((oauth as { grant?: unknown }).grant, grant, "an OAuth grant's client and scopes stay with the session through its refreshes (its tokens carry them)")
  s([snap])
    .when(refresh('h2', 'h3'))
    .then([refreshed({ refresh_hash: 'h3' })], 'the current token carries forward')
  s([snap])
    .when(refresh('h1', 'h3'))
    .then([revoked({ reason: 'refresh_token_reuse' })], 'and so do the spent ones')
  t.same(session.snapshot.types, ['SessionSnapshotted', 'SessionStarted'], 'loading reads back to a snapshot or the start')
})
