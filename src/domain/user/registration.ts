import { DomainError, isBefore } from '../shared.ts'
import type { UserEvent } from './events.ts'
import type { Account, UserState } from './state.ts'
import { sameHash } from './two-factor.ts'

// Registration and its confirmation code: the user decider's first three commands (interface
// "Authentication and sign-in": register, confirm, resend the code).

/** Wrong confirmation attempts allowed per code before it stops working. */
export const MAX_CONFIRMATION_ATTEMPTS = 5
/** Confirmation codes: at least this long between two (ms), at most CODE_DAILY_ALLOWANCE within CODE_ALLOWANCE_WINDOW_MS. */
const CODE_RESEND_COOLDOWN_MS = 60_000
const CODE_DAILY_ALLOWANCE = 5
/** The window the daily allowance counts codes in (ms); the state keeps the codes issued within it. */
const CODE_ALLOWANCE_WINDOW_MS = 86_400_000

/** The codes of `issued` (ISO times) within the allowance window before `now` (epoch ms): what the daily allowance counts and the state keeps. */
export function codesInWindow(issued: readonly string[], now: number): string[] {
  return issued.filter(t => now - Date.parse(t) < CODE_ALLOWANCE_WINDOW_MS)
}
/** An unconfirmed registration expires after this (ms): no code confirms it, none is resent; registering again starts it afresh. */
export const UNCONFIRMED_TTL_MS = 7 * 86_400_000

export interface RegisterUser {
  user_uuid: string
  email_sealed: string
  password_hash: string
  locale: string
  code_hash: string
  code_sealed: string
  code_expires_at: string
  now: string
}
export interface ResendConfirmation {
  code_hash: string
  code_sealed: string
  expires_at: string
  now: string
}
export interface ConfirmAccount {
  code_hash: string
  now: string
}

/** Whether an unconfirmed registration has expired at `now` (UNCONFIRMED_TTL_MS). */
const expired = (state: Account, now: string): boolean =>
  state.registered_at !== undefined && Date.parse(now) - Date.parse(state.registered_at) >= UNCONFIRMED_TTL_MS

/**
 * RegisterUser on a new stream → UserRegistered and the first ConfirmationCodeIssued; on an
 * unconfirmed one → RegistrationRenewed (the new password; earlier codes void) and a new
 * code within the daily allowance.
 * @throws DomainError `register_user.already_registered` (conflict) on a confirmed or deleted account.
 */
export function register(state: UserState, d: RegisterUser): UserEvent[] {
  if (state.status === 'unconfirmed') {
    // Registered again before confirmation: this password replaces the earlier one, whose
    // codes are void; a new code is mailed unless the daily allowance is spent.
    const now = Date.parse(d.now)
    const renewed: UserEvent = {
      type: 'RegistrationRenewed',
      data: { user_uuid: state.user_uuid, password_hash: d.password_hash, locale: d.locale, registered_at: d.now }
    }
    if (codesInWindow(state.codes_issued, now).length >= CODE_DAILY_ALLOWANCE) return [renewed]
    return [
      renewed,
      {
        type: 'ConfirmationCodeIssued',
        data: { user_uuid: state.user_uuid, code_hash: d.code_hash, code: d.code_sealed, expires_at: d.code_expires_at, issued_at: d.now }
      }
    ]
  }
  if (state.status !== 'none') throw new DomainError('conflict', 'register_user.already_registered', 'account already registered')
  return [
    {
      type: 'UserRegistered',
      data: { user_uuid: d.user_uuid, email: d.email_sealed, password_hash: d.password_hash, locale: d.locale, registered_at: d.now }
    },
    {
      type: 'ConfirmationCodeIssued',
      data: { user_uuid: d.user_uuid, code_hash: d.code_hash, code: d.code_sealed, expires_at: d.code_expires_at, issued_at: d.now }
    }
  ]
}

/** ResendConfirmation (unconfirmed, unexpired, past the cooldown, under the daily allowance) → ConfirmationCodeIssued; otherwise nothing. */
export function issueConfirmationCode(state: UserState, d: ResendConfirmation): UserEvent[] {
  if (state.status !== 'unconfirmed' || expired(state, d.now)) return []
  const now = Date.parse(d.now)
  const last = state.codes_issued[state.codes_issued.length - 1]
  if (last !== undefined && now - Date.parse(last) < CODE_RESEND_COOLDOWN_MS) return []
  if (codesInWindow(state.codes_issued, now).length >= CODE_DAILY_ALLOWANCE) return []
  return [
    {
      type: 'ConfirmationCodeIssued',
      data: {
        user_uuid: state.user_uuid,
        code_hash: d.code_hash,
        code: d.code_sealed,
        expires_at: d.expires_at,
        issued_at: d.now
      }
    }
  ]
}

/**
 * ConfirmAccount: the current code, unexpired, with tries left → UserConfirmed; else
 * ConfirmationFailed (counted; the handler answers `confirm_account.invalid_code`), nothing
 * once the code's tries are spent.
 */
export function confirm(state: UserState, d: ConfirmAccount): UserEvent[] {
  if (state.status !== 'unconfirmed' || !state.code) return []
  if (expired(state, d.now)) return [{ type: 'ConfirmationFailed', data: { user_uuid: state.user_uuid, failed_at: d.now } }]
  if (state.code.failed < MAX_CONFIRMATION_ATTEMPTS && isBefore(d.now, state.code.expires_at) && sameHash(state.code.hash, d.code_hash)) {
    return [{ type: 'UserConfirmed', data: { user_uuid: state.user_uuid, confirmed_at: d.now } }]
  }
  return state.code.failed < MAX_CONFIRMATION_ATTEMPTS ? [{ type: 'ConfirmationFailed', data: { user_uuid: state.user_uuid, failed_at: d.now } }] : []
}
