import t from 'tap'
import * as user from '../../../src/domain/user/decider.ts'
import type { UserCommand } from '../../../src/domain/user/decider.ts'
import type { UserEvent } from '../../../src/domain/user/events.ts'
import { spec } from '../../support/decider-spec.ts'
import { active, at, codeIssued, confirmationFailed, confirmed, deleted, HASH, now, registered, renewed, U } from './builders.ts'

// Registration and confirmation of an account (docs/interface.md §3: "(none) → POST
// /api/auth/register → account unconfirmed, confirmation code emailed; same 204 response if
// the email already existed"; "unconfirmed → POST /api/auth/confirm, correct six-digit code →
// confirmed"; section 4: resend-confirmation sends a new code "only if the address is
// registered, unconfirmed, past the resend cooldown and under the daily allowance; otherwise
// same 204"; section 8: "Confirmation codes have a resend cooldown and a daily allowance").

const iso = (ms: number): string => new Date(Date.parse(now) + ms).toISOString()
const HOUR = 3_600_000

// Command builders.
const register = (over: Partial<Extract<UserCommand, { type: 'RegisterUser' }>['data']> = {}): UserCommand => ({
  type: 'RegisterUser',
  data: {
    user_uuid: U,
    email_sealed: 'sealed:v1:x',
    password_hash: HASH,
    locale: 'en',
    code_hash: 'h1',
    code_sealed: 'sealed:v1:c',
    code_expires_at: at(30),
    now,
    ...over
  }
})
const confirm = (code: string, when = now): UserCommand => ({ type: 'ConfirmAccount', data: { code_hash: code, now: when } })
const issue = (when: string, code = 'hx'): UserCommand => ({
  type: 'ResendConfirmation',
  data: { code_hash: code, code_sealed: 'c', expires_at: '2026-11-23T00:00:00.000Z', now: when }
})
const issuedAt = (when: string, code = `h${when}`) => codeIssued({ code_hash: code, code: 'c', expires_at: '2026-11-23T00:00:00.000Z', issued_at: when })

t.test('RegisterUser and ConfirmAccount', async t => {
  const u = spec(t, user)
  u([]).when(register()).then([registered(), codeIssued()], 'an account and its first code, in one append')
  u(active)
    .when(register())
    .thenRejects('register_user.already_registered', 409, 'a confirmed account is not registered again (the handler answers the same 204)')
  u([...active, deleted()])
    .when(register())
    .thenRejects('register_user.already_registered', 409, "a deleted account's stream is never registered again")
  u([registered(), codeIssued()]).when(confirm('h1')).then([confirmed()], 'the current code confirms the account')
  u([registered(), codeIssued()]).when(confirm('h2')).then([confirmationFailed()], 'a wrong code is counted')
  u([registered(), codeIssued()])
    .when(confirm('h1', at(31)))
    .then([confirmationFailed({ failed_at: at(31) })], 'an expired code fails')
  const failures: UserEvent[] = Array.from({ length: user.MAX_CONFIRMATION_ATTEMPTS }, () => confirmationFailed())
  u([registered(), codeIssued(), ...failures])
    .when(confirm('h1'))
    .thenNothing('a code stops working after too many wrong tries')
  u([registered(), codeIssued(), ...failures])
    .when(confirm('h2'))
    .thenNothing('and further wrong tries are no longer counted')
  u([registered(), codeIssued(), ...failures.slice(1)])
    .when(confirm('h1'))
    .then([confirmed()], 'the last allowed try still confirms')
  u(active).when(confirm('h1')).thenNothing('a used code does not confirm again')
  u([]).when(confirm('h1')).thenNothing('no account, nothing')
})

t.test('confirmation codes: resend cooldown and daily allowance', async t => {
  const u = spec(t, user)
  u([registered(), issuedAt(now)])
    .when(issue('2026-11-22T10:00:30.000Z'))
    .thenNothing('within the cooldown: nothing')
  u([registered(), issuedAt(now)])
    .when(issue('2026-11-22T10:01:00.000Z'))
    .then([issuedAt('2026-11-22T10:01:00.000Z', 'hx')], 'past the cooldown: a new code')
  const five = [0, 2, 4, 6, 8].map(m => issuedAt(`2026-11-22T1${m}:00:00.000Z`))
  u([registered(), ...five])
    .when(issue('2026-11-22T20:00:00.000Z'))
    .thenNothing('the daily allowance is spent')
  u([registered(), ...five])
    .when(issue('2026-11-23T10:30:00.000Z'))
    .then([issuedAt('2026-11-23T10:30:00.000Z', 'hx')], 'a day later, allowed again')
  u(active)
    .when(issue(at(10)))
    .thenNothing('no code for a confirmed account')
  u([]).when(issue(now)).thenNothing('no code for an address never registered (the same 204)')
  u([registered(), issuedAt(now), deleted()])
    .when(issue(at(10)))
    .thenNothing('no code for a deleted account')
  const days = Array.from({ length: 40 }, (_, d) => issuedAt(iso(d * 24 * HOUR)))
  u([registered(), ...days]).thenState(s => s.status === 'unconfirmed' && s.codes_issued.length, 1, 'only the last 24 h of codes are remembered')
})

t.test('registering again before confirmation; unconfirmed expiry', async t => {
  const u = spec(t, user)
  // Someone registered the owner's address first: the owner's registration replaces it.
  const first = [registered({ password_hash: 'attacker' }), codeIssued()]
  const later = '2026-11-22T10:00:10.000Z'
  u(first)
    .when(
      register({ password_hash: 'owner', locale: 'fr', code_hash: 'c2', code_sealed: 'sealed:c2', code_expires_at: '2026-11-22T10:30:10.000Z', now: later })
    )
    .then(
      [renewed({ registered_at: later }), codeIssued({ code_hash: 'c2', code: 'sealed:c2', expires_at: '2026-11-22T10:30:10.000Z', issued_at: later })],
      'registering an unconfirmed address again replaces its password and mails a new code (within the cooldown too)'
    )
  u([...first, renewed({ registered_at: later })])
    .when(confirm('h1', later))
    .thenNothing('the earlier code is void: it confirms nothing')
  const five = [0, 2, 4, 6, 8].map(h => issuedAt(iso(h * HOUR)))
  u([registered(), ...five])
    .when(register({ password_hash: 'owner', locale: 'fr', now: iso(10 * HOUR) }))
    .then([renewed({ registered_at: iso(10 * HOUR) })], 'the daily allowance spent: the password is replaced, no code is mailed')
  const weekLater = iso(user.UNCONFIRMED_TTL_MS)
  u([registered()]).when(issue(weekLater, 'c3')).thenNothing('an expired registration gets no code')
  u([registered(), codeIssued({ expires_at: iso(8 * 24 * HOUR) })])
    .when(confirm('h1', weekLater))
    .then([confirmationFailed({ failed_at: weekLater })], 'an expired registration is confirmed by no code, even an unexpired one')
  u([registered(), codeIssued()])
    .when(register({ password_hash: 'owner', locale: 'fr', code_hash: 'c4', now: weekLater, code_expires_at: iso(user.UNCONFIRMED_TTL_MS + 30 * 60_000) }))
    .then(
      [renewed({ registered_at: weekLater }), codeIssued({ code_hash: 'c4', expires_at: iso(user.UNCONFIRMED_TTL_MS + 30 * 60_000), issued_at: weekLater })],
      'registering again after expiry starts it afresh'
    )
  u([
    registered(),
    codeIssued(),
    renewed({ registered_at: weekLater }),
    codeIssued({ code_hash: 'c4', expires_at: iso(user.UNCONFIRMED_TTL_MS + 30 * 60_000), issued_at: weekLater })
  ])
    .when(confirm('c4', iso(user.UNCONFIRMED_TTL_MS + 60_000)))
    .then([confirmed({ confirmed_at: iso(user.UNCONFIRMED_TTL_MS + 60_000) })], 'and its new code confirms it')
})

t.test('snapshots: the state carried forward restores the account exactly', async t => {
  const history: UserEvent[] = [
    ...active,
    { type: 'TwoFactorSetupStarted', data: { user_uuid: U, secret: 'sealed:v1:s1', backup_code_hashes: ['b1'], started_at: now } },
    { type: 'TwoFactorEnabled', data: { user_uuid: U, time_step: 100, enabled_at: now, kept_session_uuid: null } },
    { type: 'LoginFailed', data: { user_uuid: U, failed_at: now } },
    { type: 'LocaleChanged', data: { user_uuid: U, locale: 'fr', changed_at: now } }
  ]
  const before = history.reduce(user.evolve, user.initialState())
  const snap = user.takeSnapshot(before, at(1))
  t.same(user.evolve(user.initialState(), snap), before, 'the snapshot alone restores the state')
  t.same(JSON.parse(JSON.stringify(snap)), snap, 'the snapshot is plain JSON')
  t.equal(user.snapshot.every, user.SNAPSHOT_EVERY, 'a snapshot every SNAPSHOT_EVERY events')
  spec(
    t,
    user
  )([snap])
    .when({ type: 'CheckSecondFactor', data: { for_secret: 'sealed:v1:s1', time_step: 100, backup_code_hash: 'x', operation: 'verify_2fa', now } })
    .then([{ type: 'TwoFactorFailed', data: { user_uuid: U, failed_at: now } }], 'the last accepted step carries forward')
})
