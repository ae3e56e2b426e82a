import t from 'tap'
import * as user from '../../../src/domain/user/decider.ts'
import type { SecondFactor, UserCommand } from '../../../src/domain/user/decider.ts'
import type { UserEvent } from '../../../src/domain/user/events.ts'
import { spec } from '../../support/decider-spec.ts'
import {
  active,
  at,
  backupUsed,
  banned,
  checkStarted,
  checkSucceeded,
  codeAccepted,
  confirmed,
  deleted,
  factor,
  loginFailed,
  loginSucceeded,
  now,
  password,
  passwordChanged,
  registered,
  resetRequested,
  setupStarted,
  twoFactorEnabled,
  twoFactorFailed
} from './builders.ts'

// Passwords of an account: reset, change, and the sign-in lock. Interface section 4:
// forgot-password "204 (same whether or not the account exists)"; reset-password "401 token
// invalid, expired or used"; PATCH password "400 invalid new or wrong current password";
// login "429 account temporarily locked"; section 8: "Sign-in, two-factor and sign-up
// preview have lockouts (429)".

// Command builders.
const requestReset = (when = now, token = 't1'): UserCommand => ({
  type: 'ForgotPassword',
  data: { token_hash: token, token_sealed: 's', expires_at: at(30), now: when }
})
const reset = (token: string, when: string, hash = 'p2'): UserCommand => ({
  type: 'ResetPassword',
  data: { token_hash: token, password_hash: hash, now: when }
})
const change = (ok = true, hash?: string): UserCommand => ({ type: 'ChangePassword', data: { ...password(ok, hash), password_hash: 'p2', now } })
const start = (operation = 'login', when = now): UserCommand => ({ type: 'StartPasswordCheck', data: { operation, now: when } })
const recordLogin = (succeeded: boolean, when = now): UserCommand => ({ type: 'Login', data: { succeeded, now: when } })

t.test('password reset', async t => {
  const u = spec(t, user)
  u(active).when(requestReset()).then([resetRequested()], 'a confirmed account gets a reset link')
  u([...active, resetRequested()])
    .when(requestReset(at(0.5), 't2'))
    .thenNothing('within the cooldown: nothing')
  u([...active, resetRequested()])
    .when(requestReset(at(1), 't2'))
    .then([resetRequested({ token_hash: 't2', requested_at: at(1) })], 'past the cooldown: a new link')
  u([registered(), resetRequested()]).when(requestReset(now, 't2')).thenNothing('unconfirmed accounts get no reset')
  u([...active, banned()])
    .when(requestReset(at(1)))
    .thenNothing('a banned account gets no reset link (the caller sees the same 204)')
  u([]).when(requestReset()).thenNothing('no account: nothing (the same 204)')
  u([...active, deleted()])
    .when(requestReset())
    .thenNothing('a deleted account: nothing (the same 204)')
  u([...active, resetRequested()])
    .when(reset('t1', at(10)))
    .then([passwordChanged({ reason: 'reset', changed_at: at(10) })], 'the current link sets the new password')
  u([...active, resetRequested()])
    .when(reset('t1', at(31)))
    .thenRejects('reset_password.invalid_token', 401, 'an expired link: 401')
  u([...active, resetRequested()])
    .when(reset('t1', at(30)))
    .thenRejects('reset_password.invalid_token', 401, 'a link is expired from its expires_at on')
  u([...active, resetRequested()])
    .when(reset('other', now))
    .thenRejects('reset_password.invalid_token', 401, 'an unknown link: 401')
  u([...active, resetRequested(), passwordChanged({ reason: 'reset', changed_at: at(10) })])
    .when(reset('t1', at(11), 'p3'))
    .thenRejects('reset_password.invalid_token', 401, 'a link works once')
  u([...active, resetRequested(), resetRequested({ token_hash: 't2', requested_at: at(2) })])
    .when(reset('t1', at(3)))
    .thenRejects('reset_password.invalid_token', 401, 'a newer link replaces the older one')
  u([...active, resetRequested(), passwordChanged()])
    .when(reset('t1', at(3)))
    .thenRejects('reset_password.invalid_token', 401, 'a password changed meanwhile voids the link')
  u([...active, resetRequested(), deleted()])
    .when(reset('t1', at(3)))
    .thenRejects('reset_password.invalid_token', 401, "a deleted account's link is void")
})

t.test('password change', async t => {
  const u = spec(t, user)
  u(active).when(change()).then([passwordChanged()], 'the right current password changes it')
  u(active)
    .when({ type: 'ChangePassword', data: { ...password(true), password_hash: 'p2', kept_session_uuid: 's-mine', now } })
    .then([passwordChanged({ kept_session_uuid: 's-mine' })], 'the event names the session the change was made from: the others are revoked from it')
  u(active).when(change(false)).thenRejects('change_password.wrong_password', 400, 'a wrong current password: 400')
  u(active).when(change(true, '$argon2id$older')).thenRejects('change_password.wrong_password', 400, 'checked against a password that has changed since')
  u([...active, deleted()])
    .when(change())
    .thenRejects('change_password.not_found', 404, 'a deleted account: 404')
  u([]).when(change()).thenRejects('change_password.not_found', 404, 'no account: 404')
  u([...active, checkStarted({ operation: 'change_password' })])
    .when(change())
    .then([checkSucceeded({ operation: 'change_password' }), passwordChanged()], 'a right password clears the failures counted before it')
})

t.test('sign-in: passwords counted before they are judged, the temporary lock', async t => {
  const u = spec(t, user)
  const base = [registered({ password_hash: 'attacker' }), confirmed()]
  u(base).when(start()).then([checkStarted()], 'an attempt is counted before it is judged')
  const four = Array.from({ length: user.LOGIN_FAILURES_BEFORE_LOCK - 1 }, () => checkStarted())
  u([...base, ...four])
    .when(start())
    .then([checkStarted()], "the threshold's last one is still judged")
  u([...base, ...four, checkStarted()])
    .when(start())
    .thenRejects('login.locked', 429, 'then the account is locked (429)')
  u([...base, ...four, checkStarted()])
    .when(start('change_email'))
    .thenRejects('change_email.locked', 429, 'for every current-password check')
  const quarterHour = new Date(Date.parse(now) + user.LOGIN_LOCK_MS).toISOString()
  u([...base, ...four, checkStarted()])
    .when(start('login', quarterHour))
    .then([checkStarted({ started_at: quarterHour })], 'until the lock time has passed')
  u([...base, ...four, checkStarted(), checkSucceeded()])
    .when(start())
    .then([checkStarted()], 'a right current password clears the count')
  u([...base, ...four, checkStarted(), loginSucceeded()])
    .when(start())
    .then([checkStarted()], 'a successful sign-in clears the count')
  u([...base, deleted()])
    .when(start())
    .thenRejects('login.not_found', 404, 'a deleted account has no password to check')
  u([]).when(start()).thenRejects('login.not_found', 404, 'no account: nothing to check')
  u([...base, checkStarted()])
    .when(recordLogin(true))
    .then([loginSucceeded()], 'a success clears the count')
  u([...base, checkStarted()])
    .when(recordLogin(false))
    .thenNothing('a failure was counted already')
})

t.test('sign-in: failures recorded as LoginFailed (events written before checks were counted)', async t => {
  const u = spec(t, user)
  u(active).when(recordLogin(false)).thenNothing('a failure was counted when its check started')
  u([...active, loginFailed()])
    .when(recordLogin(true, at(1)))
    .then([loginSucceeded({ succeeded_at: at(1) })], 'a success after failures resets the count')
  u(active).when(recordLogin(true)).thenNothing('a success without failures records nothing')
  u([]).when(recordLogin(false)).thenNothing('no account: nothing')
  const five: UserEvent[] = Array.from({ length: user.LOGIN_FAILURES_BEFORE_LOCK }, (_, i) => loginFailed({ failed_at: at(i) }))
  const locked = [...active, ...five].reduce(user.evolve, user.initialState())
  t.ok(user.loginLocked(locked, at(5)), 'five wrong passwords in a row lock sign-in')
  t.notOk(user.loginLocked(locked, at(4 + 15)), 'for LOGIN_LOCK_MS after the last one')
  t.notOk(user.loginLocked([...active, ...five.slice(1)].reduce(user.evolve, user.initialState()), at(5)), 'four do not')
  u([...active, ...five])
    .when(start('login', at(5)))
    .thenRejects('login.locked', 429, 'they lock the password check too')
  u([...active, ...Array.from({ length: 50 }, (_, i) => loginFailed({ failed_at: at(i) }))]).thenState(
    s => s.status !== 'none' && s.login_failures.length,
    user.LOGIN_FAILURES_BEFORE_LOCK,
    'only the latest failures are remembered'
  )
})

t.test('with two-factor on, a password change needs a second factor (ASVS 5.0 V7.5.1); a reset lifts the sign-in lock (V6.1.1)', async t => {
  const u = spec(t, user)
  const on = [...active, setupStarted(), twoFactorEnabled()]
  const changeWith = (f: SecondFactor | null): UserCommand => ({ type: 'ChangePassword', data: { ...password(true), password_hash: 'p2', factor: f, now } })
  u(on).when(changeWith(null)).thenRejects('change_password.second_factor_required', 400, 'no second factor: refused, nothing written')
  u(on)
    .when(changeWith(factor(101)))
    .then([codeAccepted(), passwordChanged()], 'a TOTP code of a later step: accepted, then the change')
  u(on)
    .when(changeWith(factor(null, 'b1')))
    .then([backupUsed({ code_hash: 'b1' }), passwordChanged()], 'a backup code: spent, then the change')
  u(on)
    .when(changeWith(factor(null, 'nope')))
    .then([twoFactorFailed()], 'a wrong code: counted as a failure, no change')
  u(on)
    .when(changeWith(factor(100)))
    .then([twoFactorFailed()], 'the step already accepted at enabling: refused (a code works once)')
  u(active).when(changeWith(null)).then([passwordChanged()], 'without two-factor, the password alone')
  const locked = [...active, ...[1, 2, 3, 4, 5].map(i => checkStarted({ started_at: at(i / 10) }))]
  u(locked)
    .when({ type: 'StartPasswordCheck', data: { operation: 'login', now: at(1) } })
    .thenRejects('login.locked', 429, 'five wrong passwords lock sign-in')
  u([...locked, resetRequested(), passwordChanged({ reason: 'reset', changed_at: at(1) })])
    .when({ type: 'StartPasswordCheck', data: { operation: 'login', now: at(1) } })
    .then([checkStarted({ started_at: at(1) })], "a completed reset (the mailbox's owner) lifts the lock at once")
  u([...locked, passwordChanged({ changed_at: at(1) })])
    .when({ type: 'StartPasswordCheck', data: { operation: 'login', now: at(1) } })
    .thenRejects('login.locked', 429, 'a change (with the current password) does not lift it')
})
