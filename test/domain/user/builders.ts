import type {
  BackupCodeUsed,
  ConfirmationCodeIssued,
  ConfirmationFailed,
  EmailChanged,
  EmailChangeRequested,
  LocaleChanged,
  LoginFailed,
  LoginSucceeded,
  PasswordChanged,
  PasswordCheckStarted,
  PasswordCheckSucceeded,
  PasswordResetRequested,
  RegistrationRenewed,
  TwoFactorCodeAccepted,
  TwoFactorDisabled,
  TwoFactorEnabled,
  TwoFactorFailed,
  TwoFactorSetupStarted,
  UserBanned,
  UserConfirmed,
  UserDeleted,
  UserEvent,
  UserRegistered,
  UserUnbanned
} from '../../../src/domain/user/events.ts'
import type { PasswordCheck, SecondFactor } from '../../../src/domain/user/decider.ts'
import { build } from '../../support/decider-spec.ts'

// Event builders of the user aggregate (stream `user-<uuid>`), shared by the user-*.test.ts
// specs: each event type with defaults for account `u-1`, any field overridden.

export const U = 'u-1'
export const now = '2026-11-22T10:00:00.000Z'
/** `now` plus some minutes. */
export const at = (minutes: number): string => new Date(Date.parse(now) + minutes * 60_000).toISOString()
/** The account's current password hash. */
export const HASH = '$argon2id$current'

export const registered = build<UserRegistered>('UserRegistered', { user_uuid: U, email: 'sealed:v1:x', password_hash: HASH, locale: 'en', registered_at: now })
export const codeIssued = build<ConfirmationCodeIssued>('ConfirmationCodeIssued', {
  user_uuid: U,
  code_hash: 'h1',
  code: 'sealed:v1:c',
  expires_at: at(30),
  issued_at: now
})
export const confirmationFailed = build<ConfirmationFailed>('ConfirmationFailed', { user_uuid: U, failed_at: now })
export const confirmed = build<UserConfirmed>('UserConfirmed', { user_uuid: U, confirmed_at: now })
export const renewed = build<RegistrationRenewed>('RegistrationRenewed', { user_uuid: U, password_hash: 'owner', locale: 'fr', registered_at: now })
export const resetRequested = build<PasswordResetRequested>('PasswordResetRequested', {
  user_uuid: U,
  token_hash: 't1',
  token: 's',
  expires_at: at(30),
  requested_at: now
})
export const passwordChanged = build<PasswordChanged>('PasswordChanged', {
  user_uuid: U,
  password_hash: 'p2',
  reason: 'change',
  changed_at: now,
  kept_session_uuid: null
})
export const localeChanged = build<LocaleChanged>('LocaleChanged', { user_uuid: U, locale: 'fr', changed_at: now })
export const loginFailed = build<LoginFailed>('LoginFailed', { user_uuid: U, failed_at: now })
export const loginSucceeded = build<LoginSucceeded>('LoginSucceeded', { user_uuid: U, succeeded_at: now })
export const checkStarted = build<PasswordCheckStarted>('PasswordCheckStarted', { user_uuid: U, operation: 'login', started_at: now })
export const checkSucceeded = build<PasswordCheckSucceeded>('PasswordCheckSucceeded', { user_uuid: U, operation: 'login', succeeded_at: now })
export const banned = build<UserBanned>('UserBanned', { user_uuid: U, reason: 'abuse', banned_at: now })
export const unbanned = build<UserUnbanned>('UserUnbanned', { user_uuid: U, unbanned_at: now })
export const deleted = build<UserDeleted>('UserDeleted', { user_uuid: U, deleted_at: now })
export const emailChangeRequested = build<EmailChangeRequested>('EmailChangeRequested', {
  user_uuid: U,
  new_email: 'sealed:v1:new',
  token_hash: 'e1',
  token: 'sealed:v1:link',
  expires_at: at(24 * 60),
  requested_at: now
})
export const emailChanged = build<EmailChanged>('EmailChanged', { user_uuid: U, email: 'sealed:v1:new', previous_email: 'sealed:v1:x', changed_at: now })
export const setupStarted = build<TwoFactorSetupStarted>('TwoFactorSetupStarted', {
  user_uuid: U,
  secret: 'sealed:v1:s1',
  backup_code_hashes: ['b1', 'b2'],
  started_at: now
})
export const twoFactorEnabled = build<TwoFactorEnabled>('TwoFactorEnabled', { user_uuid: U, time_step: 100, enabled_at: now, kept_session_uuid: null })
export const codeAccepted = build<TwoFactorCodeAccepted>('TwoFactorCodeAccepted', { user_uuid: U, time_step: 101, accepted_at: now })
export const backupUsed = build<BackupCodeUsed>('BackupCodeUsed', { user_uuid: U, code_hash: 'b2', used_at: now })
export const twoFactorFailed = build<TwoFactorFailed>('TwoFactorFailed', { user_uuid: U, failed_at: now })
export const twoFactorDisabled = build<TwoFactorDisabled>('TwoFactorDisabled', { user_uuid: U, disabled_at: now, kept_session_uuid: null })

/** A confirmed account: registered, its code issued, confirmed. */
export const active: UserEvent[] = [registered(), codeIssued(), confirmed()]

/** A password as the command handler checked it: right or wrong, against the hash it read. */
export const password = (ok = true, hash = HASH): PasswordCheck => ({ password_ok: ok, for_password_hash: hash })
/** A second factor as the command handler checked it: the TOTP step it matched (null: none), for a secret, or a backup code's HMAC. */
export const factor = (step: number | null, backup = 'none', secret: string | null = 'sealed:v1:s1'): SecondFactor => ({
  for_secret: secret,
  time_step: step,
  backup_code_hash: backup
})
