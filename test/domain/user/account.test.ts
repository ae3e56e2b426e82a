import t from 'tap'
import * as user from '../../../src/domain/user/decider.ts'
import type { UserCommand } from '../../../src/domain/user/decider.ts'
import { spec } from '../../support/decider-spec.ts'
import {
  active,
  at,
  banned,
  checkStarted,
  checkSucceeded,
  deleted,
  emailChanged,
  emailChangeRequested,
  localeChanged,
  now,
  password,
  passwordChanged,
  resetRequested,
  unbanned
} from './builders.ts'

// Ban, locale, deletion and change of email of an account. Interface section 3: "Account:
// unconfirmed, confirmed, banned, deleted"; section 4: login "401 ... banned or deleted
// account"; DELETE /api/users/{uuid} "400 wrong or invalid password, or already deleted; 404";
// PATCH /api/users/{uuid}/email "204 (confirmation link emailed to the new address)", "400
// ... wrong current password"; verify-email-change "401 token invalid or expired";
// PATCH /api/users/me/locale "404"; docs/design/architecture.md: deleting an account destroys its data key.

// Command builders.
const ban = (reason = 'abuse'): UserCommand => ({ type: 'BanUser', data: { reason, now } })
const unban = (): UserCommand => ({ type: 'UnbanUser', data: { now } })
const locale = (code: string): UserCommand => ({ type: 'ChangeLocale', data: { locale: code, now } })
const del = (ok = true, hash?: string): UserCommand => ({ type: 'DeleteUser', data: { ...password(ok, hash), now } })
const requestChange = (ok = true, hash?: string): UserCommand => ({
  type: 'ChangeEmail',
  data: { ...password(ok, hash), new_email_sealed: 'sealed:v1:new', token_hash: 'e1', token_sealed: 'sealed:v1:link', expires_at: at(24 * 60), now }
})
const verifyEmailChange = (token: string, when: string): UserCommand => ({ type: 'VerifyEmailChange', data: { token_hash: token, now: when } })

t.test('BanUser and UnbanUser', async t => {
  const u = spec(t, user)
  u(active).when(ban()).then([banned()], 'an account is banned')
  u([...active, banned()])
    .when(ban('again'))
    .thenNothing('banning again is idempotent')
  u([...active, banned()])
    .when(unban())
    .then([unbanned()], 'a banned account is unbanned')
  u(active).when(unban()).thenNothing('unbanning an account not banned is idempotent')
  u([]).when(ban('x')).thenRejects('ban_user.not_found', 404, 'no account: 404')
  u([...active, deleted()])
    .when(unban())
    .thenRejects('ban_user.not_found', 404, 'a deleted account cannot be unbanned')
  u([...active, deleted()])
    .when(ban())
    .thenRejects('ban_user.not_found', 404, 'nor banned')
  u([...active, banned()]).thenState(s => s.status !== 'none' && s.sessions_valid_from, now, 'a ban voids every session started before it')
  u([...active, banned()]).thenState(user.isActive, false, 'a banned account may not act (sign in, refresh)')
  u([...active, banned(), unbanned({ unbanned_at: at(1) })]).thenState(user.isActive, true, 'an unbanned account may act again')
  u([...active, banned(), unbanned({ unbanned_at: at(1) })]).thenState(
    s => s.status !== 'none' && s.sessions_valid_from,
    now,
    'sessions voided by the ban stay void after the unban'
  )
})

t.test('ChangeLocale', async t => {
  const u = spec(t, user)
  u(active).when(locale('fr')).then([localeChanged()], 'a new locale for transactional emails')
  u(active).when(locale('en')).thenNothing('the same locale: nothing')
  u([...active, deleted()])
    .when(locale('fr'))
    .thenRejects('change_locale.not_found', 404, 'a deleted account: 404')
  u([]).when(locale('fr')).thenRejects('change_locale.not_found', 404, 'no account: 404')
})

t.test('DeleteUser', async t => {
  const u = spec(t, user)
  u(active).when(del()).then([deleted()], 'the right password deletes the account')
  u(active).when(del(false)).thenRejects('delete_user.wrong_password', 400, 'a wrong password: 400')
  u(active).when(del(true, '$argon2id$older')).thenRejects('delete_user.wrong_password', 400, 'a password checked against an older hash is wrong')
  u([...active, deleted()])
    .when(del())
    .thenRejects('delete_user.already_deleted', 400, 'already deleted: 400 (interface)')
  u([]).when(del()).thenRejects('delete_user.not_found', 404, 'no account: 404')
  u([...active, checkStarted({ operation: 'delete_user' })])
    .when(del())
    .then([checkSucceeded({ operation: 'delete_user' }), deleted()], 'the failures counted before the right password are cleared')
  u([...active, resetRequested(), emailChangeRequested(), deleted()]).thenState(
    s => s.status !== 'none' && [s.status, s.code, s.reset, s.email_change],
    ['deleted', null, null, null],
    'a deleted account keeps no pending code, reset or change of email'
  )
  u([...active, deleted()]).thenState(user.isActive, false, 'a deleted account may not act')
})

t.test('change of email: a link to the new address, checked when opened', async t => {
  const u = spec(t, user)
  u(active).when(requestChange()).then([emailChangeRequested()], 'the right current password mails a link to the new address')
  u(active).when(requestChange(false)).thenRejects('change_email.wrong_password', 400, 'a wrong current password: 400')
  u(active).when(requestChange(true, '$argon2id$older')).thenRejects('change_email.wrong_password', 400, 'a password checked against an older hash is wrong')
  u([...active, deleted()])
    .when(requestChange())
    .thenRejects('change_email.not_found', 404, 'a deleted account: 404')
  u([...active, checkStarted({ operation: 'change_email' })])
    .when(requestChange())
    .then([checkSucceeded({ operation: 'change_email' }), emailChangeRequested()], 'the failures counted before the right password are cleared')
  u([...active, emailChangeRequested()])
    .when(verifyEmailChange('e1', at(5)))
    .then([emailChanged({ changed_at: at(5) })], 'the link changes the address and names the previous one (told of the change)')
  u([...active, emailChangeRequested(), emailChanged({ changed_at: at(5) })]).thenState(
    s => s.status !== 'none' && s.email,
    'sealed:v1:new',
    "the new address is the account's"
  )
  u([...active, emailChangeRequested()])
    .when(verifyEmailChange('other', at(5)))
    .thenRejects('verify_email_change.invalid_token', 401, 'another link: 401')
  u([...active, emailChangeRequested(), passwordChanged({ password_hash: 'new', reason: 'reset', changed_at: at(2) })])
    .when(verifyEmailChange('e1', at(5)))
    .thenRejects('verify_email_change.invalid_token', 401, 'a new password voids the pending change')
  u([...active, emailChangeRequested()])
    .when(verifyEmailChange('e1', at(24 * 60)))
    .thenRejects('verify_email_change.invalid_token', 401, 'expired')
  u([...active, emailChangeRequested(), emailChanged({ changed_at: at(5) })])
    .when(verifyEmailChange('e1', at(6)))
    .thenRejects('verify_email_change.invalid_token', 401, 'a link works once')
  u(active).when(verifyEmailChange('e1', now)).thenRejects('verify_email_change.invalid_token', 401, 'nothing pending')
  u([...active, emailChangeRequested(), emailChangeRequested({ token_hash: 'e2', new_email: 'sealed:v1:other' })])
    .when(verifyEmailChange('e1', at(5)))
    .thenRejects('verify_email_change.invalid_token', 401, 'a newer request replaces the older link')
  u([...active, emailChangeRequested(), deleted()])
    .when(verifyEmailChange('e1', at(5)))
    .thenRejects('verify_email_change.invalid_token', 401, "a deleted account's link is void")
  u([]).when(verifyEmailChange('e1', now)).thenRejects('verify_email_change.invalid_token', 401, 'no account: the link is invalid')
})
