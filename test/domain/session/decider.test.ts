import t from 'tap'
import * as session from '../../../src/domain/session/decider.ts'
import type { AccountStanding, SessionCommand } from '../../../src/domain/session/decider.ts'
import type { SessionRefreshed, SessionRevoked, SessionSnapshotted, SessionStarted } from '../../../src/domain/session/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// A signed-in session (stream `session-<uuid>`). Interface section 4: POST /api/auth/refresh
// "401 refresh token invalid, expired, or user gone", logout "refresh token revoked (or none
// present) ... idempotent", DELETE /api/users/me/sessions/{uuid} "also invalidates its
// refresh token"; section 5.6: "refresh rotates it ... logout revokes it". Rotation and reuse
// detection: OAuth 2.0 Security BCP (RFC 9700 §4.14, refresh token rotation: a refresh token
// presented again after rotation reveals a breach, and the active one is revoked); absolute lifetime: OWASP ASVS 5.0 V7.3.2.
// The reuse grace (issue 42, item 11): the token a rotation replaced, presented again within
// a few seconds (a second tab with the same cookie), gets a token of its own, as Auth0's reuse
// interval and Okta's grace period do: only the token replaced last, only within the grace.

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'
const month = '2026-12-22T10:00:00.000Z'
const day = (n: number): string => new Date(Date.parse(now) + n * 86_400_000).toISOString()
const sec = (n: number): string => new Date(Date.parse(now) + n * 1000).toISOString()
/** The reuse grace the commands carry (REFRESH_TOKEN_REUSE_GRACE_S's default, 10 s). */
const GRACE_MS = 10_000
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
const refreshed = build<SessionRefreshed>('SessionRefreshed', {
  session_uuid: 's1',
  user_uuid: U,
  refresh_hash: 'h2',
  expires_at: month,
  refreshed_at: now,
  rotated_hash: 'h1'
})
/** A rotation from `from` to `to` (a grace sibling with `grace: true`). */
const rotated = (from: string, to: string, over: Partial<SessionRefreshed['data']> = {}): SessionRefreshed =>
  refreshed({ rotated_hash: from, refresh_hash: to, ...over })
const revoked = build<SessionRevoked>('SessionRevoked', { session_uuid: 's1', user_uuid: U, reason: 'logout', revoked_at: now })

// Command builders.
const refresh = (
  presented: string,
  next: string,
  over: { expires_at?: string; now?: string; account?: AccountStanding; grace_ms?: number } = {}
): SessionCommand => ({
  type: 'Refresh',
  data: { session_uuid: 's1', presented_hash: presented, new_hash: next, expires_at: month, now, grace_ms: GRACE_MS, account: ok, ...over }
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

t.test('Refresh: rotation and reuse detection', async t => {
  const s = spec(t, session)
  s([started()]).when(refresh('h1', 'h2')).then([refreshed()], 'the current token is spent for a new one')
  s([started(), refreshed()])
    .when(refresh('h2', 'h3'))
    .then([rotated('h2', 'h3')], 'the new token is the one that refreshes next')
  s([started(), refreshed()])
    .when(refresh('h1', 'h3', { expires_at: now, now: sec(11) }))
    .then([revoked({ reason: 'refresh_token_reuse', revoked_at: sec(11) })], 'a spent token after the grace revokes the session (RFC 9700 §4.14)')
  s([started(), refreshed(), rotated('h2', 'h3'), rotated('h3', 'h4')])
    .when(refresh('h2', 'h5'))
    .then([revoked({ reason: 'refresh_token_reuse' })], 'any remembered spent token, not only the latest, revokes it (the grace is for the last one only)')
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
    .thenRejects('refresh.invalid_token', 401, 'a revoked session is not revoked again by a spent token, nor refreshed within the grace')
  // SPENT_MEMORY + 2 rotations: h1 and n0 … n(SPENT_MEMORY) replaced; the last replaced is `previous`, the rest retired.
  const many = Array.from({ length: session.SPENT_MEMORY + 2 }, (_, i) => rotated(i === 0 ? 'h1' : `n${i - 1}`, `n${i}`))
  s([started(), ...many]).thenState(st => st.status !== 'none' && st.spent.length, session.SPENT_MEMORY, 'spent tokens remembered are bounded')
  s([started(), ...many])
    .when(refresh('n0', 'x', { now: sec(11) }))
    .then([revoked({ reason: 'refresh_token_reuse', revoked_at: sec(11) })], 'the oldest remembered spent token still revokes')
  s([started(), ...many])
    .when(refresh('h1', 'x', { now: sec(11) }))
    .thenRejects('refresh.invalid_token', 401, 'a spent token older than the memory is simply invalid')
})

t.test('Refresh: the reuse grace (two tabs refreshing with one cookie)', async t => {
  const s = spec(t, session)
  const h1h2 = rotated('h1', 'h2', { refreshed_at: sec(0) })
  s([started(), h1h2])
    .when(refresh('h1', 'h3', { now: sec(2) }))
    .then([rotated('h1', 'h3', { refreshed_at: sec(2), grace: true })], 'the replaced token within the grace: a new token of its own, the session stays')
  s([started(), h1h2])
    .when(refresh('h1', 'h3', { now: sec(9.999) }))
    .then([rotated('h1', 'h3', { refreshed_at: sec(9.999), grace: true })], 'up to the end of the grace')
  s([started(), h1h2])
    .when(refresh('h1', 'h3', { now: sec(10) }))
    .then([revoked({ reason: 'refresh_token_reuse', revoked_at: sec(10) })], 'from the end of the grace on, a reuse revokes the whole session')
  s([started(), h1h2])
    .when(refresh('h1', 'h3', { now: sec(1), grace_ms: 0 }))
    .then([revoked({ reason: 'refresh_token_reuse', revoked_at: sec(1) })], 'a grace of 0: every reuse revokes')

  // Both children of the same parent are current; the first one used retires the other.
  const twins = [started(), h1h2, rotated('h1', 'h3', { refreshed_at: sec(1), grace: true })]
  s(twins).thenState(
    st => st.status !== 'none' && [st.refresh_hash, st.siblings, st.previous],
    ['h3', ['h2'], { hash: 'h1', rotated_at: sec(0) }],
    'two current tokens, one parent'
  )
  s(twins)
    .when(refresh('h2', 'h4', { now: sec(3) }))
    .then([rotated('h2', 'h4', { refreshed_at: sec(3) })], 'the first child refreshes')
  s(twins)
    .when(refresh('h3', 'h4', { now: sec(3) }))
    .then([rotated('h3', 'h4', { refreshed_at: sec(3) })], 'so does the second')
  const next = [...twins, rotated('h3', 'h4', { refreshed_at: sec(3) })]
  s(next)
    .when(refresh('h2', 'h5', { now: sec(4) }))
    .then([revoked({ reason: 'refresh_token_reuse', revoked_at: sec(4) })], 'the unused sibling is retired by that rotation: presented again, it revokes')
  s(next)
    .when(refresh('h1', 'h5', { now: sec(4) }))
    .then(
      [revoked({ reason: 'refresh_token_reuse', revoked_at: sec(4) })],
      'so is the grandparent, even within its grace (only the token replaced last has one)'
    )
  s(next)
    .when(refresh('h3', 'h5', { now: sec(5) }))
    .then([rotated('h3', 'h5', { refreshed_at: sec(5), grace: true })], 'the token replaced last has its own grace, from its own rotation')
  s(next).thenState(st => st.status !== 'none' && st.spent, ['h1', 'h2'], 'retired: the parent and the unused sibling')

  // Bounded: MAX_GRACE_SIBLINGS tokens from one parent, then a reuse.
  const siblings = Array.from({ length: session.MAX_GRACE_SIBLINGS }, (_, i) => rotated('h1', `g${i}`, { refreshed_at: sec(1), grace: true }))
  s([started(), h1h2, ...siblings.slice(0, -1)])
    .when(refresh('h1', 'g', { now: sec(2) }))
    .then([rotated('h1', 'g', { refreshed_at: sec(2), grace: true })], `the ${session.MAX_GRACE_SIBLINGS}th token within the grace`)
  s([started(), h1h2, ...siblings])
    .when(refresh('h1', 'g', { now: sec(2) }))
    .then([revoked({ reason: 'refresh_token_reuse', revoked_at: sec(2) })], 'one more is no browser: a reuse')
  s([started(), rotated('h1', 'h2', { refreshed_at: sec(0), expires_at: sec(1) })])
    .when(refresh('h1', 'h3', { now: sec(2) }))
    .thenRejects('refresh.invalid_token', 401, 'an expired session gets nothing within the grace either')
  s([started(), h1h2])
    .when(refresh('h1', 'h3', { now: sec(2), account: { active: false, sessions_valid_from: now } }))
    .then([revoked({ reason: 'account_inactive', revoked_at: sec(2) })], "a banned account's session ends within the grace too")

  // Events from before the grace (no `rotated_hash`): each rotated the current token.
  const legacy = build<SessionRefreshed>('SessionRefreshed', { session_uuid: 's1', user_uuid: U, refresh_hash: 'h2', expires_at: month, refreshed_at: now })
  s([started(), legacy(), legacy({ refresh_hash: 'h3' })]).thenState(
    st => st.status !== 'none' && [st.refresh_hash, st.previous?.hash, st.spent],
    ['h3', 'h2', ['h1']],
    'an old rotation replaced the current token'
  )
  s([started(), legacy(), legacy({ refresh_hash: 'h3' })])
    .when(refresh('h1', 'x', { now: sec(1) }))
    .then([revoked({ reason: 'refresh_token_reuse', revoked_at: sec(1) })], 'and its spent tokens still revoke')
})

t.test("Refresh: the account's standing and the absolute lifetime", async t => {
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
    .then([rotated('h9', 'h10', { expires_at: day(90), refreshed_at: day(89) })], 'a refresh never reaches past the lifetime')
  t.equal(session.SESSION_MAX_LIFETIME_MS, 90 * 86_400_000, 'the absolute lifetime is 90 days')
})

t.test('RevokeSession: logout and revocation by the owner', async t => {
  const s = spec(t, session)
  s([started(), revoked()]).when(revoke('logout')).thenNothing('logout is idempotent')
  s([started()]).when(revoke('logout', 'not h1')).thenNothing('a logout without the current refresh token changes nothing')
  s([started()]).when(revoke('logout', 'h1')).then([revoked()], 'with it, the session ends')
  s([started(), refreshed()]).when(revoke('logout', 'h1')).thenNothing('a spent token does not log the session out (nor one within its grace)')
  s([started(), refreshed(), rotated('h1', 'h3', { grace: true })])
    .when(revoke('logout', 'h2'))
    .then([revoked()], "either tab's token logs out: a sibling is current too")
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
    {
      status: 'active',
      user_uuid: U,
      started_at: now,
      refresh_hash: 'h2',
      siblings: [],
      previous: { hash: 'h1', rotated_at: now },
      spent: [],
      expires_at: month,
      grant: null
    },
    'the snapshot holds the whole state'
  )
  const grant = { client_id: 'c-1', scopes: ['results:read'] }
  const oauth = [started({ method: 'oauth', grant }), refreshed()].reduce(session.evolve, session.initialState())
  t.same((oauth as { grant?: unknown }).grant, grant, "an OAuth grant's client and scopes stay with the session through its refreshes (its tokens carry them)")
  s([snap])
    .when(refresh('h2', 'h3'))
    .then([rotated('h2', 'h3')], 'the current token carries forward')
  s([snap])
    .when(refresh('h1', 'h3', { now: sec(11) }))
    .then([revoked({ reason: 'refresh_token_reuse', revoked_at: sec(11) })], 'and so does the one it replaced')
  // A snapshot taken before the grace existed: no `siblings`, no `previous`, the replaced token among the spent ones.
  const old = build<SessionSnapshotted>('SessionSnapshotted', {
    user_uuid: U,
    state: { status: 'active', user_uuid: U, started_at: now, refresh_hash: 'h2', spent: ['h1'], expires_at: month, grant: null },
    snapshotted_at: now
  })
  s([old()])
    .when(refresh('h2', 'h3'))
    .then([rotated('h2', 'h3')], 'an old snapshot: its current token refreshes')
  s([old()])
    .when(refresh('h1', 'h3'))
    .then([revoked({ reason: 'refresh_token_reuse' })], 'its spent token revokes')
  t.same(session.snapshot.types, ['SessionSnapshotted', 'SessionStarted'], 'loading reads back to a snapshot or the start')
})
