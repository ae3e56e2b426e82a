import type { Event } from '../shared.ts'

/** `email` is sealed with the account's data key (never in the clear). */
export type UserRegistered = Event<
  'UserRegistered',
  {
    user_uuid: string
    email: string
    password_hash: string
    locale: string
    registered_at: string
  }
>

/** `code` is the six-digit code sealed for the mailer; `code_hash` is an HMAC of it. */
export type ConfirmationCodeIssued = Event<
  'ConfirmationCodeIssued',
  {
    user_uuid: string
    code_hash: string
    code: string
    expires_at: string
    issued_at: string
  }
>

export type ConfirmationFailed = Event<'ConfirmationFailed', { user_uuid: string; failed_at: string }>

export type UserConfirmed = Event<'UserConfirmed', { user_uuid: string; confirmed_at: string }>

/** `token_hash` is the SHA-256 of the reset token; `token` is sealed for the mailer. */
export type PasswordResetRequested = Event<
  'PasswordResetRequested',
  { user_uuid: string; token_hash: string; token: string; expires_at: string; requested_at: string }
>

/** A new password: changed by the user (`change`) or through a reset link (`reset`). */
/**
 * `kept_session_uuid`: the session a change was made from, which stays open; every other
 * session open at `changed_at` is revoked from this event (flow `revoke-sessions`). Absent
 * in events recorded before it existed, and null for a reset.
 */
export type PasswordChanged = Event<
  'PasswordChanged',
  { user_uuid: string; password_hash: string; reason: 'change' | 'reset'; changed_at: string; kept_session_uuid?: string | null }
>

export type LocaleChanged = Event<'LocaleChanged', { user_uuid: string; locale: string; changed_at: string }>

/** A wrong password for this account (counted for the temporary lock). */
export type LoginFailed = Event<'LoginFailed', { user_uuid: string; failed_at: string }>
/**
 * A password is about to be checked (sign-in, or the current password of an account
 * operation): counted as a failure until the check passes, so concurrent guesses are
 * counted before any of them is judged and the lock is decided on the count.
 */
export type PasswordCheckStarted = Event<'PasswordCheckStarted', { user_uuid: string; operation: string; started_at: string }>
/** The current password of an account operation was right: the count of failures starts again. */
export type PasswordCheckSucceeded = Event<'PasswordCheckSucceeded', { user_uuid: string; operation: string; succeeded_at: string }>
/**
 * The unconfirmed address was registered again: the new password replaces the old one and
 * every earlier confirmation code is void (a registration made first by someone else never
 * becomes the owner's password).
 */
export type RegistrationRenewed = Event<'RegistrationRenewed', { user_uuid: string; password_hash: string; locale: string; registered_at: string }>
/** A sign-in after failures: the failure count starts again. */
export type LoginSucceeded = Event<'LoginSucceeded', { user_uuid: string; succeeded_at: string }>

export type UserBanned = Event<'UserBanned', { user_uuid: string; reason: string; banned_at: string }>
export type UserUnbanned = Event<'UserUnbanned', { user_uuid: string; unbanned_at: string }>

/** The account is deleted; its data key is destroyed with it (crypto-shredding). */
export type UserDeleted = Event<'UserDeleted', { user_uuid: string; deleted_at: string }>

/** 2FA setup: `secret` (TOTP, base32) sealed; backup codes as HMACs only. */
export type TwoFactorSetupStarted = Event<'TwoFactorSetupStarted', { user_uuid: string; secret: string; backup_code_hashes: string[]; started_at: string }>
/** `kept_session_uuid`: the session it was turned on from (the others are revoked: flow `revoke-sessions`); absent in older events. */
export type TwoFactorEnabled = Event<'TwoFactorEnabled', { user_uuid: string; time_step: number; enabled_at: string; kept_session_uuid?: string | null }>
/** A TOTP code was accepted at `time_step`: no code of that step or before is accepted again. */
/** `challenge_id`: the sign-in challenge it completed (spent: a challenge is single use). */
export type TwoFactorCodeAccepted = Event<'TwoFactorCodeAccepted', { user_uuid: string; time_step: number; challenge_id?: string; accepted_at: string }>
export type BackupCodeUsed = Event<'BackupCodeUsed', { user_uuid: string; code_hash: string; challenge_id?: string; used_at: string }>
export type TwoFactorFailed = Event<'TwoFactorFailed', { user_uuid: string; failed_at: string }>
/** `kept_session_uuid`: the session it was turned off from (the others are revoked: flow `revoke-sessions`); absent in older events. */
export type TwoFactorDisabled = Event<'TwoFactorDisabled', { user_uuid: string; disabled_at: string; kept_session_uuid?: string | null }>

/** A change of address waits for the link mailed to the new one; both sealed. */
export type EmailChangeRequested = Event<
  'EmailChangeRequested',
  { user_uuid: string; new_email: string; token_hash: string; token: string; expires_at: string; requested_at: string }
>
/** The new address is the account's (`email` sealed). */
/** `previous_email` (sealed; absent in events older than it): the address that is told of the change. */
export type EmailChanged = Event<'EmailChanged', { user_uuid: string; email: string; previous_email?: string; changed_at: string }>

/**
 * The account's whole state carried forward (an in-stream snapshot, every
 * SNAPSHOT_EVERY events): loading reads back only to the latest one. Holds nothing that
 * the events before it did not (hashes, sealed values).
 */
export type UserSnapshotted = Event<
  'UserSnapshotted',
  {
    user_uuid: string
    state: Record<string, unknown>
    snapshotted_at: string
  }
>

export type UserEvent =
  | PasswordCheckStarted
  | PasswordCheckSucceeded
  | RegistrationRenewed
  | UserSnapshotted
  | EmailChangeRequested
  | EmailChanged
  | TwoFactorSetupStarted
  | TwoFactorEnabled
  | TwoFactorCodeAccepted
  | BackupCodeUsed
  | TwoFactorFailed
  | TwoFactorDisabled
  | UserRegistered
  | ConfirmationCodeIssued
  | ConfirmationFailed
  | UserConfirmed
  | PasswordResetRequested
  | PasswordChanged
  | LocaleChanged
  | LoginFailed
  | LoginSucceeded
  | UserBanned
  | UserUnbanned
  | UserDeleted
