import t from 'tap'
import * as user from '../src/domain/user/decider.ts'
import type { UserEvent } from '../src/domain/user/events.ts'
import { spec } from './support/decider-spec.ts'

// Given/when/then specifications of every rule of the user decider (interface
// "Authentication and sign-in", "Account", section 3's states), two-factor and email change included.

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'
const at = (minutes: number): string => new Date(Date.parse(now) + minutes * 60_000).toISOString()
const HASH = '$argon2id$current'

const registered: UserEvent = { type: 'UserRegistered', data: { user_uuid: U, email: 'sealed:v1:x', password_hash: HASH, locale: 'en', registered_at: now } }
const issued: UserEvent = { type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: 'h1', code: 'sealed:v1:c', expires_at: at(30), issued_at: now } }
const confirmed: UserEvent = { type: 'UserConfirmed', data: { user_uuid: U, confirmed_at: now } }
const deleted: UserEvent = { type: 'UserDeleted', data: { user_uuid: U, deleted_at: now } }
const active = [registered, issued, confirmed]
const password = (ok = true, hash = HASH) => ({ password_ok: ok, for_password_hash: hash })

t.test('registration and confirmation', async t => {
  const u = spec(t, user)
  const register = { type: 'RegisterUser' as const, data: { user_uuid: U, email_sealed: 'sealed:v1:x', password_hash: HASH, locale: 'en', code_hash: 'h1', code_sealed: 'sealed:v1:c', code_expires_at: at(30), now } }
  u([]).when(register).then([registered, issued], 'an account and its first code, in one append')
  u([registered, issued, confirmed]).when(register).thenThrows('register_user.already_registered', 'a confirmed account is not registered again')
  u([registered, issued]).when({ type: 'ConfirmUser', data: { code_hash: 'h1', now } }).then([confirmed])
  u([registered, issued]).when({ type: 'ConfirmUser', data: { code_hash: 'h2', now } }).then([{ type: 'ConfirmationFailed', data: { user_uuid: U, failed_at: now } }], 'a wrong code is counted')
  u([registered, issued]).when({ type: 'ConfirmUser', data: { code_hash: 'h1', now: at(31) } }).then([{ type: 'ConfirmationFailed', data: { user_uuid: U, failed_at: at(31) } }], 'an expired code fails')
  const failures: UserEvent[] = Array.from({ length: user.MAX_CONFIRMATION_ATTEMPTS }, () => ({ type: 'ConfirmationFailed', data: { user_uuid: U, failed_at: now } }))
  u([registered, issued, ...failures]).when({ type: 'ConfirmUser', data: { code_hash: 'h1', now } }).then([], 'a code stops working after too many wrong tries')
  u(active).when({ type: 'ConfirmUser', data: { code_hash: 'h1', now } }).then([], 'a used code does not confirm again')
  u([]).when({ type: 'ConfirmUser', data: { code_hash: 'h1', now } }).then([], 'no account, nothing')
})

t.test('confirmation codes: resend cooldown and daily allowance', async t => {
  const u = spec(t, user)
  const issuedAt = (iso: string): UserEvent => ({ type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: `h${iso}`, code: 'c', expires_at: '2026-11-23T00:00:00.000Z', issued_at: iso } })
  const issue = (when: string) => ({ type: 'IssueConfirmationCode' as const, data: { code_hash: 'hx', code_sealed: 'c', expires_at: '2026-11-23T00:00:00.000Z', now: when } })
  const issuedNow = (when: string): UserEvent => ({ type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: 'hx', code: 'c', expires_at: '2026-11-23T00:00:00.000Z', issued_at: when } })
  u([registered, issuedAt(now)]).when(issue('2026-11-22T10:00:30.000Z')).then([], 'within the cooldown: nothing')
  u([registered, issuedAt(now)]).when(issue('2026-11-22T10:01:00.000Z')).then([issuedNow('2026-11-22T10:01:00.000Z')])
  const five = [0, 2, 4, 6, 8].map(m => issuedAt(`2026-11-22T1${m}:00:00.000Z`))
  u([registered, ...five]).when(issue('2026-11-22T20:00:00.000Z')).then([], 'the daily allowance is spent')
  u([registered, ...five]).when(issue('2026-11-23T10:30:00.000Z')).then([issuedNow('2026-11-23T10:30:00.000Z')], 'a day later, allowed again')
  u(active).when(issue(at(10))).then([], 'no code for a confirmed account')
  const days = Array.from({ length: 40 }, (_, d) => issuedAt(new Date(Date.parse(now) + d * 86_400_000).toISOString()))
  const s = [registered, ...days].reduce(user.evolve, user.initialState())
  t.equal(s.status === 'unconfirmed' && s.codes_issued.length, 1, 'only the last 24 h of codes are remembered')
})

t.test('password reset and change', async t => {
  const u = spec(t, user)
  const requested: UserEvent = { type: 'PasswordResetRequested', data: { user_uuid: U, token_hash: 't1', token: 's', expires_at: at(30), requested_at: now } }
  u(active).when({ type: 'RequestPasswordReset', data: { token_hash: 't1', token_sealed: 's', expires_at: at(30), now } }).then([requested])
  u([...active, requested]).when({ type: 'RequestPasswordReset', data: { token_hash: 't2', token_sealed: 's', expires_at: at(31), now: at(0.5) } }).then([], 'within the cooldown: nothing')
  u([registered, requested]).when({ type: 'RequestPasswordReset', data: { token_hash: 't2', token_sealed: 's', expires_at: now, now } }).then([], 'unconfirmed accounts get no reset')
  u([...active, requested]).when({ type: 'ResetPassword', data: { token_hash: 't1', password_hash: 'p2', now: at(10) } })
    .then([{ type: 'PasswordChanged', data: { user_uuid: U, password_hash: 'p2', reason: 'reset', changed_at: at(10) } }])
  u([...active, requested]).when({ type: 'ResetPassword', data: { token_hash: 't1', password_hash: 'p2', now: at(31) } }).thenThrows('reset_password.invalid_token', 'expired')
  u([...active, requested]).when({ type: 'ResetPassword', data: { token_hash: 'other', password_hash: 'p2', now } }).thenThrows('reset_password.invalid_token')
  const changedByReset: UserEvent = { type: 'PasswordChanged', data: { user_uuid: U, password_hash: 'p2', reason: 'reset', changed_at: at(10) } }
  u([...active, requested, changedByReset]).when({ type: 'ResetPassword', data: { token_hash: 't1', password_hash: 'p3', now: at(11) } }).thenThrows('reset_password.invalid_token', 'a link works once')
  u(active).when({ type: 'ChangePassword', data: { ...password(), password_hash: 'p2', now } })
    .then([{ type: 'PasswordChanged', data: { user_uuid: U, password_hash: 'p2', reason: 'change', changed_at: now } }])
  u(active).when({ type: 'ChangePassword', data: { ...password(false), password_hash: 'p2', now } }).thenThrows('change_password.wrong_password')
  u(active).when({ type: 'ChangePassword', data: { ...password(true, '$argon2id$older'), password_hash: 'p2', now } }).thenThrows('change_password.wrong_password', 'checked against a password that has changed since')
  u([...active, deleted]).when({ type: 'ChangePassword', data: { ...password(), password_hash: 'p2', now } }).thenThrows('change_password.not_found')
})

t.test('sign-in: failures, the temporary lock, success', async t => {
  const u = spec(t, user)
  // LoginFailed: recorded before attempts were counted when their check starts; still folded.
  const failed = (when: string): UserEvent => ({ type: 'LoginFailed', data: { user_uuid: U, failed_at: when } })
  u(active).when({ type: 'RecordLogin', data: { succeeded: false, now } }).then([], 'a failure was counted when its check started')
  u([...active, failed(now)]).when({ type: 'RecordLogin', data: { succeeded: true, now: at(1) } }).then([{ type: 'LoginSucceeded', data: { user_uuid: U, succeeded_at: at(1) } }], 'a success after failures resets the count')
  u(active).when({ type: 'RecordLogin', data: { succeeded: true, now } }).then([], 'a success without failures records nothing')
  u([]).when({ type: 'RecordLogin', data: { succeeded: false, now } }).then([])
  const five = Array.from({ length: user.LOGIN_FAILURES_BEFORE_LOCK }, (_, i) => failed(at(i)))
  const locked = [...active, ...five].reduce(user.evolve, user.initialState())
  t.ok(user.loginLocked(locked, at(5)), 'five wrong passwords in a row lock sign-in')
  t.notOk(user.loginLocked(locked, at(4 + 15)), 'for LOGIN_LOCK_MS after the last one')
  t.notOk(user.loginLocked([...active, ...five.slice(1)].reduce(user.evolve, user.initialState()), at(5)), 'four do not')
  const many = [...active, ...Array.from({ length: 50 }, (_, i) => failed(at(i)))].reduce(user.evolve, user.initialState())
  t.equal(many.status !== 'none' && many.login_failures.length, user.LOGIN_FAILURES_BEFORE_LOCK, 'only the latest failures are remembered')
})

t.test('ban and unban; change of locale; deletion', async t => {
  const u = spec(t, user)
  const banned: UserEvent = { type: 'UserBanned', data: { user_uuid: U, reason: 'abuse', banned_at: now } }
  u(active).when({ type: 'BanUser', data: { reason: 'abuse', now } }).then([banned])
  u([...active, banned]).when({ type: 'BanUser', data: { reason: 'again', now } }).then([], 'idempotent')
  u([...active, banned]).when({ type: 'UnbanUser', data: { now } }).then([{ type: 'UserUnbanned', data: { user_uuid: U, unbanned_at: now } }])
  u(active).when({ type: 'UnbanUser', data: { now } }).then([], 'idempotent')
  u([]).when({ type: 'BanUser', data: { reason: 'x', now } }).thenThrows('ban_user.not_found')
  u([...active, deleted]).when({ type: 'UnbanUser', data: { now } }).thenThrows('ban_user.not_found')
  const s = [...active, banned].reduce(user.evolve, user.initialState())
  t.equal(s.status !== 'none' && s.sessions_valid_from, now, 'a ban voids every session started before it')
  t.notOk(user.isActive(s), 'a banned account may not act')
  const unbanned: UserEvent = { type: 'UserUnbanned', data: { user_uuid: U, unbanned_at: at(1) } }
  t.ok(user.isActive([...active, banned, unbanned].reduce(user.evolve, user.initialState())))

  u(active).when({ type: 'ChangeLocale', data: { locale: 'fr', now } }).then([{ type: 'LocaleChanged', data: { user_uuid: U, locale: 'fr', changed_at: now } }])
  u(active).when({ type: 'ChangeLocale', data: { locale: 'en', now } }).then([], 'the same locale: nothing')
  u([...active, deleted]).when({ type: 'ChangeLocale', data: { locale: 'fr', now } }).thenThrows('change_locale.not_found')

  u(active).when({ type: 'DeleteUser', data: { ...password(), now } }).then([deleted])
  u(active).when({ type: 'DeleteUser', data: { ...password(false), now } }).thenThrows('delete_user.wrong_password')
  u([...active, deleted]).when({ type: 'DeleteUser', data: { ...password(), now } }).thenThrows('delete_user.already_deleted')
  u([]).when({ type: 'DeleteUser', data: { ...password(), now } }).thenThrows('delete_user.not_found')
})

t.test('change of email: a link to the new address, checked when opened', async t => {
  const u = spec(t, user)
  const request = (ok = true) => ({ type: 'RequestEmailChange' as const, data: { ...password(ok), new_email_sealed: 'sealed:v1:new', token_hash: 'e1', token_sealed: 'sealed:v1:link', expires_at: at(24 * 60), now } })
  const requested: UserEvent = { type: 'EmailChangeRequested', data: { user_uuid: U, new_email: 'sealed:v1:new', token_hash: 'e1', token: 'sealed:v1:link', expires_at: at(24 * 60), requested_at: now } }
  u(active).when(request()).then([requested])
  u(active).when(request(false)).thenThrows('change_email.wrong_password')
  u([...active, deleted]).when(request()).thenThrows('change_email.not_found')
  const changed: UserEvent = { type: 'EmailChanged', data: { user_uuid: U, email: 'sealed:v1:new', previous_email: (registered.data as { email: string }).email, changed_at: at(5) } }
  u([...active, requested]).when({ type: 'ChangeEmail', data: { token_hash: 'e1', now: at(5) } }).then([changed])
  u([...active, requested]).when({ type: 'ChangeEmail', data: { token_hash: 'other', now: at(5) } }).thenThrows('verify_email_change.invalid_token')
  const reset: UserEvent = { type: 'PasswordChanged', data: { user_uuid: U, password_hash: 'new', reason: 'reset', changed_at: at(2) } }
  u([...active, requested, reset]).when({ type: 'ChangeEmail', data: { token_hash: 'e1', now: at(5) } }).thenThrows('verify_email_change.invalid_token', 'a new password voids the pending change')
  u([...active, requested]).when({ type: 'ChangeEmail', data: { token_hash: 'e1', now: at(24 * 60) } }).thenThrows('verify_email_change.invalid_token', 'expired')
  u([...active, requested, changed]).when({ type: 'ChangeEmail', data: { token_hash: 'e1', now: at(6) } }).thenThrows('verify_email_change.invalid_token', 'a link works once')
  u(active).when({ type: 'ChangeEmail', data: { token_hash: 'e1', now } }).thenThrows('verify_email_change.invalid_token', 'nothing pending')
  const second: UserEvent = { ...requested, data: { ...(requested.data as any), token_hash: 'e2', new_email: 'sealed:v1:other' } }
  u([...active, requested, second]).when({ type: 'ChangeEmail', data: { token_hash: 'e1', now: at(5) } }).thenThrows('verify_email_change.invalid_token', 'a newer request replaces the older link')
})

t.test('two-factor: setup, enabling, second factor, disabling, lock', async t => {
  const u = spec(t, user)
  const setup: UserEvent = { type: 'TwoFactorSetupStarted', data: { user_uuid: U, secret: 'sealed:v1:s1', backup_code_hashes: ['b1', 'b2'], started_at: now } }
  const enabled: UserEvent = { type: 'TwoFactorEnabled', data: { user_uuid: U, time_step: 100, enabled_at: now } }
  const on = [...active, setup, enabled]
  const factor = (step: number | null, backup = 'none', secret: string | null = 'sealed:v1:s1') => ({ for_secret: secret, time_step: step, backup_code_hash: backup })
  const failed = (when = now): UserEvent => ({ type: 'TwoFactorFailed', data: { user_uuid: U, failed_at: when } })

  u(active).when({ type: 'StartTwoFactorSetup', data: { secret_sealed: 'sealed:v1:s1', backup_code_hashes: ['b1', 'b2'], now } }).then([setup])
  u([...active, setup]).when({ type: 'StartTwoFactorSetup', data: { secret_sealed: 'sealed:v1:s2', backup_code_hashes: ['b3'], now } })
    .then([{ type: 'TwoFactorSetupStarted', data: { user_uuid: U, secret: 'sealed:v1:s2', backup_code_hashes: ['b3'], started_at: now } }], 'a setup in progress starts again')
  u(on).when({ type: 'StartTwoFactorSetup', data: { secret_sealed: 'sealed:v1:s2', backup_code_hashes: [], now } }).thenThrows('enable_2fa.already_enabled')

  u([...active, setup]).when({ type: 'EnableTwoFactor', data: { ...factor(100), ...password(), now } }).then([enabled])
  u([...active, setup]).when({ type: 'EnableTwoFactor', data: { ...factor(100), ...password(false), now } }).thenThrows('verify_2fa_setup.wrong_password', 'the current password is needed too')
  u([...active, setup]).when({ type: 'EnableTwoFactor', data: { ...factor(null), ...password(), now } }).thenThrows('verify_2fa_setup.invalid_code')
  u([...active, setup]).when({ type: 'EnableTwoFactor', data: { ...factor(100, 'none', 'sealed:v1:older'), ...password(), now } }).thenThrows('verify_2fa_setup.invalid_code', 'a code of a secret the setup no longer has')
  u(active).when({ type: 'EnableTwoFactor', data: { ...factor(100), ...password(), now } }).thenThrows('verify_2fa_setup.no_setup')
  u(on).when({ type: 'EnableTwoFactor', data: { ...factor(101), ...password(), now } }).thenThrows('verify_2fa_setup.already_enabled', 'the second of two concurrent requests')

  const check = (step: number | null, backup = 'none', secret: string | null = 'sealed:v1:s1', when = now) => ({ type: 'CheckSecondFactor' as const, data: { ...factor(step, backup, secret), operation: 'verify_2fa', now: when } })
  u(on).when(check(101)).then([{ type: 'TwoFactorCodeAccepted', data: { user_uuid: U, time_step: 101, accepted_at: now } }])
  u(on).when(check(100)).then([failed()], 'the step that enabled it is not accepted again (RFC 6238 §5.2)')
  u([...on, { type: 'TwoFactorCodeAccepted', data: { user_uuid: U, time_step: 101, accepted_at: now } }]).when(check(101)).then([failed()], 'a code is never accepted twice')
  u(on).when(check(null, 'b2')).then([{ type: 'BackupCodeUsed', data: { user_uuid: U, code_hash: 'b2', used_at: now } }])
  u([...on, { type: 'BackupCodeUsed', data: { user_uuid: U, code_hash: 'b2', used_at: now } }]).when(check(null, 'b2')).then([failed()], 'a backup code works once')
  u(on).when(check(null, 'b9')).then([failed()])
  u(on).when(check(101, 'none', 'sealed:v1:older')).then([failed()], 'checked against another secret')
  const fiveFailures = Array.from({ length: user.TWO_FACTOR_FAILURES_BEFORE_LOCK }, (_, i) => failed(at(i)))
  u([...on, ...fiveFailures]).when(check(101, 'none', 'sealed:v1:s1', at(5))).thenThrows('verify_2fa.locked')
  u([...on, ...fiveFailures]).when(check(101, 'none', 'sealed:v1:s1', at(4 + 15))).then([{ type: 'TwoFactorCodeAccepted', data: { user_uuid: U, time_step: 101, accepted_at: at(19) } }], 'the lock lasts TWO_FACTOR_LOCK_MS')
  u(active).when(check(101)).thenThrows('verify_2fa.invalid_token', 'not enabled')

  const disable = (ok: boolean, f: ReturnType<typeof factor>) => ({ type: 'DisableTwoFactor' as const, data: { ...password(ok), ...f, now } })
  const disabled: UserEvent = { type: 'TwoFactorDisabled', data: { user_uuid: U, disabled_at: now } }
  u(on).when(disable(true, factor(101))).then([{ type: 'TwoFactorCodeAccepted', data: { user_uuid: U, time_step: 101, accepted_at: now } }, disabled])
  u(on).when(disable(true, factor(null, 'b1'))).then([{ type: 'BackupCodeUsed', data: { user_uuid: U, code_hash: 'b1', used_at: now } }, disabled], 'with a backup code')
  u(on).when(disable(false, factor(101))).thenThrows('disable_2fa.wrong_password')
  u(on).when(disable(true, factor(null))).then([failed()], 'a wrong code is counted and 2FA stays on')
  u([...active, setup]).when(disable(true, factor(101))).thenThrows('disable_2fa.not_enabled')
  u([...on, ...fiveFailures]).when(disable(true, factor(101))).thenThrows('disable_2fa.locked')
  u([...on, deleted]).when(disable(true, factor(101))).thenThrows('disable_2fa.not_found')
  const off = [...on, disabled].reduce(user.evolve, user.initialState())
  t.same(off.status !== 'none' && off.two_factor, { status: 'off', secret: null, backup_code_hashes: [], last_step: -1, failures: [] }, 'disabling forgets the secret and the codes')
})

t.test('snapshots: the state carried forward restores the account exactly', async t => {
  const history: UserEvent[] = [
    ...active,
    { type: 'TwoFactorSetupStarted', data: { user_uuid: U, secret: 'sealed:v1:s1', backup_code_hashes: ['b1'], started_at: now } },
    { type: 'TwoFactorEnabled', data: { user_uuid: U, time_step: 100, enabled_at: now } },
    { type: 'LoginFailed', data: { user_uuid: U, failed_at: now } },
    { type: 'LocaleChanged', data: { user_uuid: U, locale: 'fr', changed_at: now } }
  ]
  const before = history.reduce(user.evolve, user.initialState())
  const snap = user.takeSnapshot(before, at(1))
  t.same(user.evolve(user.initialState(), snap), before)
  t.same(JSON.parse(JSON.stringify(snap)), snap, 'the snapshot is plain JSON')
  t.equal(user.snapshot.every, user.SNAPSHOT_EVERY)
  spec(t, user)([snap]).when({ type: 'CheckSecondFactor', data: { for_secret: 'sealed:v1:s1', time_step: 100, backup_code_hash: 'x', operation: 'verify_2fa', now } })
    .then([{ type: 'TwoFactorFailed', data: { user_uuid: U, failed_at: now } }], 'the last accepted step carries forward')
})
