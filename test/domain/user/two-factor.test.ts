import t from 'tap'
import * as user from '../../../src/domain/user/decider.ts'
import type { SecondFactor, UserCommand } from '../../../src/domain/user/decider.ts'
import type { UserEvent } from '../../../src/domain/user/events.ts'
import { spec } from '../../support/decider-spec.ts'
import {
  active,
  at,
  backupUsed,
  checkStarted,
  checkSucceeded,
  codeAccepted,
  deleted,
  factor,
  now,
  password,
  setupStarted,
  twoFactorDisabled,
  twoFactorEnabled,
  twoFactorFailed
} from './builders.ts'

// The user's two-factor authentication. Interface section 3: "2FA not enabled → enable →
// setup in progress (secret, otpauth URI and backup codes returned)"; "setup in progress →
// verify-setup, valid TOTP code → active"; "active → disable, correct password and valid code
// → not enabled"; "active → enable → 409". Section 4: verify-setup "400 no setup in progress
// or invalid code; 409 already enabled"; disable "400 wrong password, invalid code, or 2FA not
// enabled; 429 too many failed attempts"; /api/auth/2fa/verify "401 temp token invalid or
// code wrong; 429". RFC 6238 §5.2: a verifier must not accept a second attempt of the OTP
// after the successful validation for the first (a time step is accepted once).

const on: UserEvent[] = [...active, setupStarted(), twoFactorEnabled()]
const fiveFailures = Array.from({ length: user.TWO_FACTOR_FAILURES_BEFORE_LOCK }, (_, i) => twoFactorFailed({ failed_at: at(i) }))

// Command builders.
const startSetup = (secret = 'sealed:v1:s1', codes = ['b1', 'b2']): UserCommand => ({
  type: 'EnableTwoFactor',
  data: { secret_sealed: secret, backup_code_hashes: codes, now }
})
const enable = (f: SecondFactor): UserCommand => ({ type: 'VerifyTwoFactorSetup', data: { ...f, now } })
const check = (step: number | null, backup = 'none', secret: string | null = 'sealed:v1:s1', when = now, challenge?: string): UserCommand => ({
  type: 'CheckSecondFactor',
  data: { ...factor(step, backup, secret), ...(challenge !== undefined && { challenge_id: challenge }), operation: 'verify_2fa', now: when }
})
const disable = (ok: boolean, f: SecondFactor, when = now): UserCommand => ({ type: 'DisableTwoFactor', data: { ...password(ok), ...f, now: when } })

t.test('EnableTwoFactor and VerifyTwoFactorSetup', async t => {
  const u = spec(t, user)
  u(active).when(startSetup()).then([setupStarted()], 'not enabled → setup in progress, with the sealed secret and hashed backup codes')
  u([...active, setupStarted()])
    .when(startSetup('sealed:v1:s2', ['b3']))
    .then([setupStarted({ secret: 'sealed:v1:s2', backup_code_hashes: ['b3'] })], 'a setup in progress starts again')
  u(on).when(startSetup('sealed:v1:s2', [])).thenRejects('enable_2fa.already_enabled', 409, 'active → enable: 409')
  u([...on, twoFactorDisabled()])
    .when(startSetup('sealed:v1:s2', ['b3']))
    .then([setupStarted({ secret: 'sealed:v1:s2', backup_code_hashes: ['b3'] })], 'once disabled, a new setup starts')
  u([...active, deleted()])
    .when(startSetup())
    .thenRejects('enable_2fa.not_found', 404, 'a deleted account: 404')
  u([...active, setupStarted()])
    .when(enable(factor(100)))
    .then([twoFactorEnabled()], "a valid code of the setup's secret enables it")
  u([...active, setupStarted()])
    .when(enable(factor(null)))
    .thenRejects('verify_2fa_setup.invalid_code', 400, 'an invalid code: 400')
  u([...active, setupStarted()])
    .when(enable(factor(100, 'none', 'sealed:v1:older')))
    .thenRejects('verify_2fa_setup.invalid_code', 400, 'a code of a secret the setup no longer has')
  u(active)
    .when(enable(factor(100)))
    .thenRejects('verify_2fa_setup.no_setup', 400, 'no setup in progress: 400')
  u(on)
    .when(enable(factor(101)))
    .thenRejects('verify_2fa_setup.already_enabled', 409, 'the second of two concurrent requests: 409')
  u([...active, setupStarted(), checkStarted({ operation: 'login' })])
    .when(enable(factor(100)))
    .then([twoFactorEnabled()], 'the code alone (interface: "TOTP code"): no password is checked, a sign-in\'s counted checks stay as they were')
})

t.test('CheckSecondFactor: a TOTP step or a backup code, each once', async t => {
  const u = spec(t, user)
  u(on).when(check(101)).then([codeAccepted()], 'a code of a later step is accepted')
  u(on).when(check(100)).then([twoFactorFailed()], 'the step that enabled it is not accepted again (RFC 6238 §5.2)')
  u([...on, codeAccepted()])
    .when(check(101))
    .then([twoFactorFailed()], 'a code is never accepted twice')
  u([...on, codeAccepted({ time_step: 105 })])
    .when(check(103))
    .then([twoFactorFailed()], 'nor a code of a step before the last accepted one')
  u(on).when(check(null, 'b2')).then([backupUsed()], 'a backup code is accepted')
  u([...on, backupUsed()])
    .when(check(null, 'b2'))
    .then([twoFactorFailed()], 'a backup code works once')
  u(on).when(check(null, 'b9')).then([twoFactorFailed()], 'an unknown backup code fails')
  u(on)
    .when(check(101, 'none', 'sealed:v1:older'))
    .then([twoFactorFailed()], 'checked against another secret')
  u([...on, ...fiveFailures])
    .when(check(101, 'none', 'sealed:v1:s1', at(5)))
    .thenRejects('verify_2fa.locked', 429, 'too many wrong codes lock the step (429)')
  u([...on, ...fiveFailures])
    .when(check(101, 'none', 'sealed:v1:s1', at(4 + 15)))
    .then([codeAccepted({ accepted_at: at(19) })], 'the lock lasts TWO_FACTOR_LOCK_MS')
  u([...on, ...fiveFailures.slice(1), codeAccepted(), twoFactorFailed({ failed_at: at(5) })])
    .when(check(102, 'none', 'sealed:v1:s1', at(5)))
    .then([codeAccepted({ time_step: 102, accepted_at: at(5) })], 'an accepted code clears the failures: the lock counts failures in a row')
  u(active).when(check(101)).thenRejects('verify_2fa.invalid_token', 401, 'not enabled: the challenge is invalid (401)')
  u([...on, twoFactorDisabled()])
    .when(check(101))
    .thenRejects('verify_2fa.invalid_token', 401, 'disabled: the challenge is invalid (401)')
})

t.test('CheckSecondFactor: a sign-in challenge is single use', async t => {
  const u = spec(t, user)
  u(on)
    .when(check(101, 'none', 'sealed:v1:s1', now, 'ch1'))
    .then([codeAccepted({ challenge_id: 'ch1' })], 'the accepted code spends its challenge')
  u([...on, codeAccepted({ challenge_id: 'ch1' })])
    .when(check(102, 'none', 'sealed:v1:s1', now, 'ch1'))
    .thenRejects('verify_2fa.invalid_token', 401, 'a spent challenge is invalid, even with a fresh code')
  u([...on, backupUsed({ challenge_id: 'ch2' })])
    .when(check(null, 'b1', 'sealed:v1:s1', now, 'ch2'))
    .thenRejects('verify_2fa.invalid_token', 401, 'a challenge spent with a backup code too')
  u([...on, codeAccepted({ challenge_id: 'ch1' })])
    .when(check(102, 'none', 'sealed:v1:s1', now, 'ch2'))
    .then([codeAccepted({ time_step: 102, challenge_id: 'ch2' })], 'another challenge is completed')
  const many = Array.from({ length: user.SPENT_CHALLENGES + 4 }, (_, i) => codeAccepted({ time_step: 101 + i, challenge_id: `c${i}` }))
  u([...on, ...many]).thenState(
    s => s.status !== 'none' && s.two_factor.used_challenges?.length,
    user.SPENT_CHALLENGES,
    'spent challenges remembered are bounded'
  )
})

t.test('DisableTwoFactor: the password and a second factor', async t => {
  const u = spec(t, user)
  u(on)
    .when(disable(true, factor(101)))
    .then([codeAccepted(), twoFactorDisabled()], 'the password and a valid code disable it')
  u(on)
    .when(disable(true, factor(null, 'b1')))
    .then([backupUsed({ code_hash: 'b1' }), twoFactorDisabled()], 'with a backup code')
  u(on)
    .when(disable(false, factor(101)))
    .thenRejects('disable_2fa.wrong_password', 400, 'a wrong password: 400')
  u(on)
    .when(disable(true, factor(null)))
    .then([twoFactorFailed()], 'a wrong code is counted and 2FA stays on')
  u(on)
    .when(disable(true, factor(100)))
    .then([twoFactorFailed()], 'a step accepted before is a wrong code (RFC 6238 §5.2)')
  u([...active, setupStarted()])
    .when(disable(true, factor(101)))
    .thenRejects('disable_2fa.not_enabled', 400, 'a setup in progress is not enabled: 400')
  u(active)
    .when(disable(true, factor(101)))
    .thenRejects('disable_2fa.not_enabled', 400, 'not enabled: 400')
  u([...on, ...fiveFailures])
    .when(disable(true, factor(101)))
    .thenRejects('disable_2fa.locked', 429, 'too many wrong codes: 429')
  u([...on, ...fiveFailures.slice(1)])
    .when(disable(true, factor(null), at(5)))
    .then([twoFactorFailed({ failed_at: at(5) })], 'the last failure before the lock is still counted')
  u([...on, deleted()])
    .when(disable(true, factor(101)))
    .thenRejects('disable_2fa.not_found', 404, 'a deleted account: 404')
  u([...on, checkStarted({ operation: 'disable_2fa' })])
    .when(disable(true, factor(101)))
    .then([checkSucceeded({ operation: 'disable_2fa' }), codeAccepted(), twoFactorDisabled()], 'the failures counted before the right password are cleared')
  u([...on, twoFactorDisabled()]).thenState(
    s => s.status !== 'none' && s.two_factor,
    { status: 'off', secret: null, backup_code_hashes: [], last_step: -1, failures: [] },
    'disabling forgets the secret and the codes'
  )
})
