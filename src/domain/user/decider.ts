import { DomainError } from '../shared.ts'
import type { ConfirmationCodeIssued, UserEvent } from './events.ts'

/** Wrong confirmation attempts allowed per code before it stops working. */
export const MAX_CONFIRMATION_ATTEMPTS = 5
/** Confirmation codes: at least this long between two (ms), at most this many per 24 h. */
export const CODE_RESEND_COOLDOWN_MS = 60_000
export const CODE_DAILY_ALLOWANCE = 5
/** Password reset mails: at least this long between two (ms). */
export const RESET_COOLDOWN_MS = 60_000
/** Wrong two-factor codes in a row that lock the second step, and for how long (ms). */
export const TWO_FACTOR_FAILURES_BEFORE_LOCK = 5
export const TWO_FACTOR_LOCK_MS = 15 * 60_000
/** Wrong passwords in a row that lock sign-in, and for how long (ms). */
export const LOGIN_FAILURES_BEFORE_LOCK = 5
export const LOGIN_LOCK_MS = 15 * 60_000

export type UserState =
  | { status: 'none' }
  | {
    status: 'unconfirmed' | 'confirmed' | 'deleted'
    banned: boolean
    /** Times of wrong passwords since the last successful sign-in. */
    login_failures: string[]
    user_uuid: string
    email: string
    password_hash: string
    locale: string
    code: { hash: string, expires_at: string, failed: number } | null
    /** When confirmation codes were issued (for the cooldown and the daily allowance). */
    codes_issued: string[]
    reset: { hash: string, expires_at: string, requested_at: string } | null
    two_factor: TwoFactorState
    email_change: { new_email: string, hash: string, expires_at: string } | null
  }

/** Two-factor: not enabled, setup in progress, active (interface section 3). */
export interface TwoFactorState {
  status: 'off' | 'setup' | 'active'
  secret: string | null
  backup_code_hashes: string[]
  /** Last accepted TOTP time step (a code is never accepted twice). */
  last_step: number
  /** Recent failed codes (for the temporary lock). */
  failures: string[]
}

const TWO_FACTOR_OFF: TwoFactorState = { status: 'off', secret: null, backup_code_hashes: [], last_step: -1, failures: [] }

export const initialState = (): UserState => ({ status: 'none' })

export function evolve (state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserRegistered':
      return { status: 'unconfirmed', banned: false, login_failures: [], user_uuid: event.data.user_uuid, email: event.data.email, password_hash: event.data.password_hash, locale: event.data.locale, code: null, codes_issued: [], reset: null, two_factor: TWO_FACTOR_OFF, email_change: null }
    case 'ConfirmationCodeIssued':
      if (state.status === 'none') return state
      return { ...state, code: { hash: event.data.code_hash, expires_at: event.data.expires_at, failed: 0 }, codes_issued: [...state.codes_issued, event.data.issued_at] }
    case 'ConfirmationFailed':
      if (state.status === 'none' || !state.code) return state
      return { ...state, code: { ...state.code, failed: state.code.failed + 1 } }
    case 'UserConfirmed':
      if (state.status === 'none') return state
      return { ...state, status: 'confirmed', code: null }
    case 'PasswordResetRequested':
      if (state.status === 'none') return state
      return { ...state, reset: { hash: event.data.token_hash, expires_at: event.data.expires_at, requested_at: event.data.requested_at } }
    case 'PasswordChanged':
      if (state.status === 'none') return state
      return { ...state, password_hash: event.data.password_hash, reset: null }
    case 'LocaleChanged':
      if (state.status === 'none') return state
      return { ...state, locale: event.data.locale }
    case 'LoginFailed':
      if (state.status === 'none') return state
      return { ...state, login_failures: [...state.login_failures, event.data.failed_at].slice(-LOGIN_FAILURES_BEFORE_LOCK) }
    case 'LoginSucceeded':
      if (state.status === 'none') return state
      return { ...state, login_failures: [] }
    case 'UserBanned':
      if (state.status === 'none') return state
      return { ...state, banned: true }
    case 'UserUnbanned':
      if (state.status === 'none') return state
      return { ...state, banned: false }
    case 'EmailChangeRequested':
      if (state.status === 'none') return state
      return { ...state, email_change: { new_email: event.data.new_email, hash: event.data.token_hash, expires_at: event.data.expires_at } }
    case 'EmailChanged':
      if (state.status === 'none') return state
      return { ...state, email: event.data.email, email_change: null }
    case 'TwoFactorSetupStarted':
      if (state.status === 'none') return state
      return { ...state, two_factor: { ...TWO_FACTOR_OFF, status: 'setup', secret: event.data.secret, backup_code_hashes: event.data.backup_code_hashes } }
    case 'TwoFactorEnabled':
      if (state.status === 'none') return state
      return { ...state, two_factor: { ...state.two_factor, status: 'active', last_step: event.data.time_step, failures: [] } }
    case 'TwoFactorCodeAccepted':
      if (state.status === 'none') return state
      return { ...state, two_factor: { ...state.two_factor, last_step: Math.max(state.two_factor.last_step, event.data.time_step), failures: [] } }
    case 'BackupCodeUsed':
      if (state.status === 'none') return state
      return { ...state, two_factor: { ...state.two_factor, backup_code_hashes: state.two_factor.backup_code_hashes.filter(h => h !== event.data.code_hash), failures: [] } }
    case 'TwoFactorFailed':
      if (state.status === 'none') return state
      return { ...state, two_factor: { ...state.two_factor, failures: [...state.two_factor.failures, event.data.failed_at].slice(-TWO_FACTOR_FAILURES_BEFORE_LOCK) } }
    case 'TwoFactorDisabled':
      if (state.status === 'none') return state
      return { ...state, two_factor: TWO_FACTOR_OFF }
    case 'UserDeleted':
      if (state.status === 'none') return state
      return { ...state, status: 'deleted', code: null, reset: null }
    default: {
      const _exhaustive: never = event
      return state
    }
  }
}

export type UserCommand =
  | { type: 'RegisterUser', data: { user_uuid: string, email_sealed: string, password_hash: string, locale: string, now: string } }
  | { type: 'IssueConfirmationCode', data: { code_hash: string, code_sealed: string, expires_at: string, now: string } }
  | { type: 'ConfirmUser', data: { code_matches: (hash: string) => boolean, now: string } }
  | { type: 'RequestPasswordReset', data: { token_hash: string, token_sealed: string, expires_at: string, now: string } }
  | { type: 'ResetPassword', data: { token_hash: string, password_hash: string, now: string } }
  | { type: 'ChangePassword', data: { password_hash: string, now: string } }
  | { type: 'ChangeLocale', data: { locale: string, now: string } }
  | { type: 'RecordLogin', data: { succeeded: boolean, now: string } }
  | { type: 'BanUser', data: { reason: string, now: string } }
  | { type: 'UnbanUser', data: { now: string } }
  | { type: 'DeleteUser', data: { now: string } }

/**
 * The user decider.
 * - RegisterUser on a new stream → UserRegistered.
 * - IssueConfirmationCode on an unconfirmed user → ConfirmationCodeIssued.
 * - ConfirmUser: a matching, unexpired code with attempts left → UserConfirmed; otherwise
 *   ConfirmationFailed is returned together with a thrown `confirm_account.invalid_code`
 *   (see `confirm`), so failed attempts are counted.
 * @throws DomainError conflict `register_user.already_registered` when the stream exists.
 */
export function decide (command: UserCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'RegisterUser':
      if (state.status !== 'none') throw new DomainError('conflict', 'register_user.already_registered', 'account already registered')
      return [{ type: 'UserRegistered', data: { user_uuid: command.data.user_uuid, email: command.data.email_sealed, password_hash: command.data.password_hash, locale: command.data.locale, registered_at: command.data.now } }]
    case 'IssueConfirmationCode': {
      if (state.status !== 'unconfirmed') return []
      // Resend limits: a cooldown between codes and a daily allowance; beyond them, nothing.
      const now = Date.parse(command.data.now)
      const last = state.codes_issued[state.codes_issued.length - 1]
      if (last !== undefined && now - Date.parse(last) < CODE_RESEND_COOLDOWN_MS) return []
      if (state.codes_issued.filter(t => now - Date.parse(t) < 86_400_000).length >= CODE_DAILY_ALLOWANCE) return []
      const issued: ConfirmationCodeIssued = { type: 'ConfirmationCodeIssued', data: { user_uuid: state.user_uuid, code_hash: command.data.code_hash, code: command.data.code_sealed, expires_at: command.data.expires_at, issued_at: command.data.now } }
      return [issued]
    }
    case 'ConfirmUser':
      return confirm(command.data, state)
    case 'RequestPasswordReset': {
      if (state.status !== 'confirmed') return []
      if (state.reset && Date.parse(command.data.now) - Date.parse(state.reset.requested_at) < RESET_COOLDOWN_MS) return []
      const d = command.data
      return [{ type: 'PasswordResetRequested', data: { user_uuid: state.user_uuid, token_hash: d.token_hash, token: d.token_sealed, expires_at: d.expires_at, requested_at: d.now } }]
    }
    case 'ResetPassword': {
      const d = command.data
      if (state.status !== 'confirmed' || !state.reset || state.reset.hash !== d.token_hash || d.now >= state.reset.expires_at) {
        throw new DomainError('unauthorized', 'reset_password.invalid_token', 'the reset link is invalid, expired or already used')
      }
      return [{ type: 'PasswordChanged', data: { user_uuid: state.user_uuid, password_hash: d.password_hash, reason: 'reset', changed_at: d.now } }]
    }
    case 'ChangePassword':
      if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'change_password.not_found', 'no such user')
      return [{ type: 'PasswordChanged', data: { user_uuid: state.user_uuid, password_hash: command.data.password_hash, reason: 'change', changed_at: command.data.now } }]
    case 'RecordLogin':
      if (state.status === 'none') return []
      if (!command.data.succeeded) return [{ type: 'LoginFailed', data: { user_uuid: state.user_uuid, failed_at: command.data.now } }]
      return state.login_failures.length > 0 ? [{ type: 'LoginSucceeded', data: { user_uuid: state.user_uuid, succeeded_at: command.data.now } }] : []
    case 'BanUser':
      if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'ban_user.not_found', 'no such account')
      return state.banned ? [] : [{ type: 'UserBanned', data: { user_uuid: state.user_uuid, reason: command.data.reason, banned_at: command.data.now } }]
    case 'UnbanUser':
      if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'ban_user.not_found', 'no such account')
      return state.banned ? [{ type: 'UserUnbanned', data: { user_uuid: state.user_uuid, unbanned_at: command.data.now } }] : []
    case 'DeleteUser':
      if (state.status === 'none') throw new DomainError('not_found', 'delete_user.not_found', 'no such user')
      if (state.status === 'deleted') throw new DomainError('invalid', 'delete_user.already_deleted', 'the account is already deleted')
      return [{ type: 'UserDeleted', data: { user_uuid: state.user_uuid, deleted_at: command.data.now } }]
    case 'ChangeLocale':
      if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'change_locale.not_found', 'no such user')
      if (state.locale === command.data.locale) return []
      return [{ type: 'LocaleChanged', data: { user_uuid: state.user_uuid, locale: command.data.locale, changed_at: command.data.now } }]
    default: {
      const _exhaustive: never = command
      return []
    }
  }
}

/** Outcome of a confirmation attempt: events to append and whether it succeeded. */
export function confirm (cmd: { code_matches: (hash: string) => boolean, now: string }, state: UserState): UserEvent[] {
  if (state.status !== 'unconfirmed' || !state.code) return []
  const usable = state.code.failed < MAX_CONFIRMATION_ATTEMPTS && cmd.now < state.code.expires_at
  if (usable && cmd.code_matches(state.code.hash)) {
    return [{ type: 'UserConfirmed', data: { user_uuid: state.user_uuid, confirmed_at: cmd.now } }]
  }
  if (state.code.failed < MAX_CONFIRMATION_ATTEMPTS) {
    return [{ type: 'ConfirmationFailed', data: { user_uuid: state.user_uuid, failed_at: cmd.now } }]
  }
  return []
}

/** Whether sign-in is locked now: enough recent failures in a row, the last within the lock time. */
export function loginLocked (state: UserState, now: string): boolean {
  if (state.status === 'none' || state.login_failures.length < LOGIN_FAILURES_BEFORE_LOCK) return false
  const last = state.login_failures[state.login_failures.length - 1]
  return Date.parse(now) - Date.parse(last) < LOGIN_LOCK_MS
}

/** Whether the two-factor step is locked now (too many wrong codes recently). */
export function twoFactorLocked (state: UserState, now: string): boolean {
  if (state.status === 'none') return false
  const f = state.two_factor.failures
  return f.length >= TWO_FACTOR_FAILURES_BEFORE_LOCK && Date.parse(now) - Date.parse(f[f.length - 1]) < TWO_FACTOR_LOCK_MS
}
