import { ignoreUnknownEvent } from '../shared.ts'
import type { UserEvent } from './events.ts'
import type { Account, UserState } from './state.ts'
import { TWO_FACTOR_FAILURES_BEFORE_LOCK, TWO_FACTOR_OFF, spend } from './two-factor.ts'
import { codesInWindow } from './registration.ts'

// The user decider's fold: an account's events into its state (decider.ts decides from it).

/** Wrong passwords in a row that lock sign-in, and for how long (ms). */
export const LOGIN_FAILURES_BEFORE_LOCK = 5
export const LOGIN_LOCK_MS = 15 * 60_000

/** The account after `event` (a new state: states are never changed in place). */
export function evolve(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserRegistered':
      return {
        status: 'unconfirmed',
        banned: false,
        sessions_valid_from: null,
        login_failures: [],
        user_uuid: event.data.user_uuid,
        email: event.data.email,
        password_hash: event.data.password_hash,
        locale: event.data.locale,
        registered_at: event.data.registered_at,
        code: null,
        codes_issued: [],
        reset: null,
        two_factor: TWO_FACTOR_OFF,
        email_change: null
      }
    case 'UserSnapshotted':
      return { ...(event.data.state as unknown as Account) }
  }
  if (state.status === 'none') return state
  switch (event.type) {
    case 'ConfirmationCodeIssued': {
      const at = Date.parse(event.data.issued_at)
      return {
        ...state,
        code: { hash: event.data.code_hash, expires_at: event.data.expires_at, failed: 0 },
        codes_issued: [...codesInWindow(state.codes_issued, at), event.data.issued_at]
      }
    }
    case 'ConfirmationFailed':
      return state.code ? { ...state, code: { ...state.code, failed: state.code.failed + 1 } } : state
    case 'UserConfirmed':
      return { ...state, status: 'confirmed', code: null, codes_issued: [] }
    case 'PasswordResetRequested':
      return { ...state, reset: { hash: event.data.token_hash, expires_at: event.data.expires_at, requested_at: event.data.requested_at } }
    // A new password voids a pending reset and a pending email change (one started by whoever held the old password).
    // A reset proves control of the mailbox: it lifts the sign-in lock too (ASVS 5.0 V6.1.1, malicious lockout).
    case 'PasswordChanged':
      return {
        ...state,
        password_hash: event.data.password_hash,
        reset: null,
        email_change: null,
        ...(event.data.reason === 'reset' && { login_failures: [] })
      }
    case 'LocaleChanged':
      return { ...state, locale: event.data.locale }
    case 'PasswordCheckStarted':
      return { ...state, login_failures: [...state.login_failures, event.data.started_at].slice(-LOGIN_FAILURES_BEFORE_LOCK) }
    case 'PasswordCheckSucceeded':
      return { ...state, login_failures: [] }
    case 'RegistrationRenewed':
      return {
        ...state,
        password_hash: event.data.password_hash,
        locale: event.data.locale,
        registered_at: event.data.registered_at,
        code: null,
        login_failures: []
      }
    case 'LoginFailed':
      return { ...state, login_failures: [...state.login_failures, event.data.failed_at].slice(-LOGIN_FAILURES_BEFORE_LOCK) }
    case 'LoginSucceeded':
      return { ...state, login_failures: [] }
    case 'UserBanned':
      return { ...state, banned: true, sessions_valid_from: event.data.banned_at }
    case 'UserUnbanned':
      return { ...state, banned: false }
    case 'EmailChangeRequested':
      return { ...state, email_change: { new_email: event.data.new_email, hash: event.data.token_hash, expires_at: event.data.expires_at } }
    case 'EmailChanged':
      return { ...state, email: event.data.email, email_change: null }
    case 'TwoFactorSetupStarted':
      return { ...state, two_factor: { ...TWO_FACTOR_OFF, status: 'setup', secret: event.data.secret, backup_code_hashes: event.data.backup_code_hashes } }
    case 'TwoFactorEnabled':
      return { ...state, two_factor: { ...state.two_factor, status: 'active', last_step: event.data.time_step, failures: [] } }
    case 'TwoFactorCodeAccepted':
      return {
        ...state,
        two_factor: {
          ...state.two_factor,
          last_step: Math.max(state.two_factor.last_step, event.data.time_step),
          failures: [],
          used_challenges: spend(state.two_factor, event.data.challenge_id)
        }
      }
    case 'BackupCodeUsed':
      return {
        ...state,
        two_factor: {
          ...state.two_factor,
          backup_code_hashes: state.two_factor.backup_code_hashes.filter(h => h !== event.data.code_hash),
          failures: [],
          used_challenges: spend(state.two_factor, event.data.challenge_id)
        }
      }
    case 'TwoFactorFailed':
      return {
        ...state,
        two_factor: { ...state.two_factor, failures: [...state.two_factor.failures, event.data.failed_at].slice(-TWO_FACTOR_FAILURES_BEFORE_LOCK) }
      }
    case 'TwoFactorDisabled':
      return { ...state, two_factor: TWO_FACTOR_OFF }
    case 'UserDeleted':
      return { ...state, status: 'deleted', code: null, reset: null, email_change: null }
    default:
      return ignoreUnknownEvent(event, state)
  }
}
