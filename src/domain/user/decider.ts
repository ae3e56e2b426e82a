import { DomainError, type ErrorKind, isAtOrAfter, noEventsForUnknown } from '../shared.ts'
import type { UserEvent, UserSnapshotted } from './events.ts'
import type { Account, UserState } from './state.ts'
import { LOGIN_FAILURES_BEFORE_LOCK, LOGIN_LOCK_MS } from './evolve.ts'
import { refusedSecondFactor, sameHash, secondFactor, twoFactorLocked, withSecondFactor, type SecondFactor } from './two-factor.ts'
import { confirm, issueConfirmationCode, register, type ConfirmAccount, type ResendConfirmation, type RegisterUser } from './registration.ts'

export type { Account, TwoFactorState, UserState } from './state.ts'
export { evolve, LOGIN_FAILURES_BEFORE_LOCK, LOGIN_LOCK_MS } from './evolve.ts'
export { MAX_CONFIRMATION_ATTEMPTS, UNCONFIRMED_TTL_MS } from './registration.ts'
export {
  SPENT_CHALLENGES,
  TWO_FACTOR_FAILURES_BEFORE_LOCK,
  refusedSecondFactor,
  sameHash,
  twoFactorLocked,
  type SecondFactor
} from './two-factor.ts'

/** Password reset mails: at least this long between two (ms). */
export const RESET_COOLDOWN_MS = 60_000
/** Events between two UserSnapshotted (the most a command reads back, plus one append). */
export const SNAPSHOT_EVERY = 100

export const initialState = (): UserState => ({ status: 'none' })

/** The snapshot event that carries `state` forward. */
export function takeSnapshot(state: UserState, now: string): UserSnapshotted {
  const account = state as Account
  return { type: 'UserSnapshotted', data: { user_uuid: account.user_uuid, state: { ...account } as unknown as Record<string, unknown>, snapshotted_at: now } }
}

/** A snapshot every SNAPSHOT_EVERY events (read back to by `handle`). */
export const snapshot = { types: ['UserSnapshotted', 'UserRegistered'], every: SNAPSHOT_EVERY, take: takeSnapshot } as const

/** A password as checked by the command handler: whether it matched the hash `for_password_hash`. */
export interface PasswordCheck {
  password_ok: boolean
  for_password_hash: string
}

export type UserCommand =
  | { type: 'RegisterUser'; data: RegisterUser }
  | { type: 'ResendConfirmation'; data: ResendConfirmation }
  | { type: 'ConfirmAccount'; data: ConfirmAccount }
  | { type: 'ForgotPassword'; data: { token_hash: string; token_sealed: string; expires_at: string; now: string } }
  | { type: 'ResetPassword'; data: { token_hash: string; password_hash: string; now: string } }
  | { type: 'ChangePassword'; data: PasswordCheck & { password_hash: string; factor?: SecondFactor | null; kept_session_uuid?: string | null; now: string } }
  | { type: 'ChangeLocale'; data: { locale: string; now: string } }
  | { type: 'Login'; data: { succeeded: boolean; now: string } }
  | { type: 'StartPasswordCheck'; data: { operation: string; now: string } }
  | { type: 'BanUser'; data: { reason: string; now: string } }
  | { type: 'UnbanUser'; data: { now: string } }
  | { type: 'DeleteUser'; data: PasswordCheck & { now: string } }
  | {
      type: 'ChangeEmail'
      data: PasswordCheck & {
        new_email_sealed: string
        token_hash: string
        token_sealed: string
        expires_at: string
        factor?: SecondFactor | null
        now: string
      }
    }
  | { type: 'VerifyEmailChange'; data: { token_hash: string; now: string } }
  | { type: 'EnableTwoFactor'; data: { secret_sealed: string; backup_code_hashes: string[]; now: string } }
  | { type: 'VerifyTwoFactorSetup'; data: SecondFactor & { kept_session_uuid?: string | null; now: string } }
  | { type: 'CheckSecondFactor'; data: SecondFactor & { operation: string; now: string } }
  | { type: 'DisableTwoFactor'; data: PasswordCheck & SecondFactor & { kept_session_uuid?: string | null; now: string } }

function fail(kind: ErrorKind, code: string, message: string): never {
  throw new DomainError(kind, code, message)
}

function account(state: UserState, operation: string): Account {
  if (state.status === 'none' || state.status === 'deleted') fail('not_found', `${operation}.not_found`, 'no such user')
  return state as Account
}

const passwordMatches = (state: Account, p: PasswordCheck): boolean => p.password_ok && p.for_password_hash === state.password_hash

/** After a right current password: the failures counted before it are cleared (an event only when there were some). */
const passed = (state: Account, operation: string, now: string): UserEvent[] =>
  state.login_failures.length > 0 ? [{ type: 'PasswordCheckSucceeded', data: { user_uuid: state.user_uuid, operation, succeeded_at: now } }] : []

/**
 * The user decider (interface "Authentication and sign-in", "Account"; section 3 states).
 * Facts that need secrets or slow hashing arrive as data: a password checked against a
 * hash (`password_ok` for `for_password_hash`: stale when the password changed since), a
 * TOTP step checked against a sealed secret, HMACs of codes and tokens.
 * - RegisterUser, ResendConfirmation, ConfirmAccount: registration and its confirmation
 *   code (registration.ts). A registration unconfirmed for UNCONFIRMED_TTL_MS expires: no
 *   code confirms it and none is resent.
 * - StartPasswordCheck → PasswordCheckStarted, counted as a failure until the operation
 *   it guards succeeds (LoginSucceeded / PasswordCheckSucceeded clear the count); refused
 *   with `<operation>.locked` while LOGIN_FAILURES_BEFORE_LOCK recent ones stand: sign-in
 *   and every current-password check share the lock, judged before the password is.
 * - ForgotPassword (confirmed, not banned, past the cooldown) → PasswordResetRequested;
 *   ResetPassword with the current token → PasswordChanged `reset`.
 * - ChangePassword, DeleteUser, ChangeEmail need the current password; with
 *   two-factor on, ChangePassword and ChangeEmail need a second factor too
 *   (`withSecondFactor`). A reset (PasswordChanged `reset`) lifts the sign-in lock.
 * - VerifyEmailChange with the current link → EmailChanged.
 * - Login → LoginFailed, or LoginSucceeded after failures.
 * - Two-factor: EnableTwoFactor (not active) → TwoFactorSetupStarted, restarting a
 *   setup in progress; VerifyTwoFactorSetup with a code of the setup's secret → TwoFactorEnabled;
 *   CheckSecondFactor (see `secondFactor`); DisableTwoFactor with the password and a
 *   second factor → the factor's event and TwoFactorDisabled.
 * - BanUser / UnbanUser / ChangeLocale: idempotent.
 * @throws DomainError with the operation's code, per rule above (see each case).
 */
export function decide(command: UserCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'RegisterUser':
      return register(state, command.data)
    case 'ResendConfirmation':
      return issueConfirmationCode(state, command.data)
    case 'ConfirmAccount':
      return confirm(state, command.data)
    case 'ForgotPassword': {
      // A banned account gets no link (the caller still sees the same 204): a reset would be mailed for an account that cannot sign in.
      if (!isActive(state)) return []
      if (state.reset && Date.parse(command.data.now) - Date.parse(state.reset.requested_at) < RESET_COOLDOWN_MS) return []
      const d = command.data
      return [
        {
          type: 'PasswordResetRequested',
          data: { user_uuid: state.user_uuid, token_hash: d.token_hash, token: d.token_sealed, expires_at: d.expires_at, requested_at: d.now }
        }
      ]
    }
    case 'ResetPassword': {
      const d = command.data
      if (state.status !== 'confirmed' || !state.reset || !sameHash(state.reset.hash, d.token_hash) || isAtOrAfter(d.now, state.reset.expires_at)) {
        fail('unauthorized', 'reset_password.invalid_token', 'the reset link is invalid, expired or already used')
      }
      return [
        {
          type: 'PasswordChanged',
          data: { user_uuid: (state as Account).user_uuid, password_hash: d.password_hash, reason: 'reset', changed_at: d.now, kept_session_uuid: null }
        }
      ]
    }
    case 'ChangePassword': {
      const a = account(state, 'change_password')
      if (!passwordMatches(a, command.data)) fail('invalid', 'change_password.wrong_password', 'the current password is wrong')
      const factor = withSecondFactor(a, command.data.factor, 'change_password', command.data.now)
      if (!factor.ok) return [...passed(a, 'change_password', command.data.now), ...factor.events]
      return [
        ...passed(a, 'change_password', command.data.now),
        ...factor.events,
        {
          type: 'PasswordChanged',
          data: {
            user_uuid: a.user_uuid,
            password_hash: command.data.password_hash,
            reason: 'change',
            changed_at: command.data.now,
            kept_session_uuid: command.data.kept_session_uuid ?? null
          }
        }
      ]
    }
    case 'StartPasswordCheck': {
      const a = account(state, command.data.operation)
      if (loginLocked(a, command.data.now))
        fail(
          'locked',
          `${command.data.operation}.locked`,
          'too many wrong passwords: the account is locked for a while; try again later or reset your password'
        )
      return [{ type: 'PasswordCheckStarted', data: { user_uuid: a.user_uuid, operation: command.data.operation, started_at: command.data.now } }]
    }
    case 'Login':
      // The attempt was counted when its check started (StartPasswordCheck): a failure adds nothing.
      if (state.status === 'none' || !command.data.succeeded) return []
      return state.login_failures.length > 0 ? [{ type: 'LoginSucceeded', data: { user_uuid: state.user_uuid, succeeded_at: command.data.now } }] : []
    case 'BanUser': {
      const a = account(state, 'ban_user')
      return a.banned ? [] : [{ type: 'UserBanned', data: { user_uuid: a.user_uuid, reason: command.data.reason, banned_at: command.data.now } }]
    }
    case 'UnbanUser': {
      const a = account(state, 'ban_user')
      return a.banned ? [{ type: 'UserUnbanned', data: { user_uuid: a.user_uuid, unbanned_at: command.data.now } }] : []
    }
    case 'DeleteUser': {
      if (state.status === 'none') fail('not_found', 'delete_user.not_found', 'no such user')
      if (state.status === 'deleted') fail('invalid', 'delete_user.already_deleted', 'the account is already deleted')
      const a = state as Account
      if (!passwordMatches(a, command.data)) fail('invalid', 'delete_user.wrong_password', 'the password is wrong')
      return [...passed(a, 'delete_user', command.data.now), { type: 'UserDeleted', data: { user_uuid: a.user_uuid, deleted_at: command.data.now } }]
    }
    case 'ChangeLocale': {
      const a = account(state, 'change_locale')
      if (a.locale === command.data.locale) return []
      return [{ type: 'LocaleChanged', data: { user_uuid: a.user_uuid, locale: command.data.locale, changed_at: command.data.now } }]
    }
    case 'ChangeEmail': {
      const a = account(state, 'change_email')
      const d = command.data
      if (!passwordMatches(a, d)) fail('invalid', 'change_email.wrong_password', 'the current password is wrong')
      const factor = withSecondFactor(a, d.factor, 'change_email', d.now)
      if (!factor.ok) return [...passed(a, 'change_email', d.now), ...factor.events]
      return [
        ...passed(a, 'change_email', d.now),
        ...factor.events,
        {
          type: 'EmailChangeRequested',
          data: {
            user_uuid: a.user_uuid,
            new_email: d.new_email_sealed,
            token_hash: d.token_hash,
            token: d.token_sealed,
            expires_at: d.expires_at,
            requested_at: d.now
          }
        }
      ]
    }
    case 'VerifyEmailChange': {
      const d = command.data
      if (
        state.status === 'none' ||
        state.status === 'deleted' ||
        !state.email_change ||
        !sameHash(state.email_change.hash, d.token_hash) ||
        isAtOrAfter(d.now, state.email_change.expires_at)
      ) {
        fail('unauthorized', 'verify_email_change.invalid_token', 'the link is invalid or expired')
      }
      const a = state as Account
      return [{ type: 'EmailChanged', data: { user_uuid: a.user_uuid, email: a.email_change!.new_email, previous_email: a.email, changed_at: d.now } }]
    }
    case 'EnableTwoFactor': {
      const a = account(state, 'enable_2fa')
      if (a.two_factor.status === 'active') fail('conflict', 'enable_2fa.already_enabled', 'two-factor authentication is already enabled')
      return [
        {
          type: 'TwoFactorSetupStarted',
          data: {
            user_uuid: a.user_uuid,
            secret: command.data.secret_sealed,
            backup_code_hashes: command.data.backup_code_hashes,
            started_at: command.data.now
          }
        }
      ]
    }
    case 'VerifyTwoFactorSetup': {
      const a = account(state, 'verify_2fa_setup')
      const d = command.data
      if (a.two_factor.status === 'active') fail('conflict', 'verify_2fa_setup.already_enabled', 'two-factor authentication is already enabled')
      if (a.two_factor.status !== 'setup') fail('invalid', 'verify_2fa_setup.no_setup', 'no two-factor setup in progress')
      // The code alone (interface: "TOTP code"); what guards a stolen session is around it:
      // TwoFactorEnabled is mailed to the account, and every other session is signed out.
      if (d.time_step === null || d.for_secret !== a.two_factor.secret) fail('invalid', 'verify_2fa_setup.invalid_code', 'the code is not valid')
      return [
        {
          type: 'TwoFactorEnabled',
          data: { user_uuid: a.user_uuid, time_step: d.time_step!, enabled_at: d.now, kept_session_uuid: d.kept_session_uuid ?? null }
        }
      ]
    }
    case 'CheckSecondFactor': {
      const a = account(state, command.data.operation)
      if (a.two_factor.status !== 'active') fail('unauthorized', `${command.data.operation}.invalid_token`, 'two-factor authentication is not enabled')
      return secondFactor(a, command.data)
    }
    case 'DisableTwoFactor': {
      const a = account(state, 'disable_2fa')
      const d = command.data
      if (a.two_factor.status !== 'active') fail('invalid', 'disable_2fa.not_enabled', 'two-factor authentication is not enabled')
      if (twoFactorLocked(a, d.now)) fail('locked', 'disable_2fa.locked', 'too many wrong codes; try again later')
      if (!passwordMatches(a, d)) fail('invalid', 'disable_2fa.wrong_password', 'the password is wrong')
      const factor = secondFactor(a, { ...d, operation: 'disable_2fa' })
      if (refusedSecondFactor(factor)) return [...passed(a, 'disable_2fa', d.now), ...factor]
      return [
        ...passed(a, 'disable_2fa', d.now),
        ...factor,
        { type: 'TwoFactorDisabled', data: { user_uuid: a.user_uuid, disabled_at: d.now, kept_session_uuid: d.kept_session_uuid ?? null } }
      ]
    }
    default:
      return noEventsForUnknown(command)
  }
}

/** Whether the account may act (sign in, refresh, use its credentials): confirmed and not banned. */
export const isActive = (state: UserState): state is Account & { status: 'confirmed' } => state.status === 'confirmed' && !state.banned

/** Whether sign-in is locked now: enough recent failures in a row, the last within the lock time. */
export function loginLocked(state: UserState, now: string): boolean {
  if (state.status === 'none' || state.login_failures.length < LOGIN_FAILURES_BEFORE_LOCK) return false
  const last = state.login_failures[state.login_failures.length - 1]
  return Date.parse(now) - Date.parse(last) < LOGIN_LOCK_MS
}
