import { DomainError } from '../shared.ts'
import type { ConfirmationCodeIssued, UserEvent } from './events.ts'

/** Wrong confirmation attempts allowed per code before it stops working. */
export const MAX_CONFIRMATION_ATTEMPTS = 5

export type UserState =
  | { status: 'none' }
  | {
    status: 'unconfirmed' | 'confirmed'
    user_uuid: string
    email: string
    password_hash: string
    locale: string
    code: { hash: string, expires_at: string, failed: number } | null
  }

export const initialState = (): UserState => ({ status: 'none' })

export function evolve (state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserRegistered':
      return { status: 'unconfirmed', user_uuid: event.data.user_uuid, email: event.data.email, password_hash: event.data.password_hash, locale: event.data.locale, code: null }
    case 'ConfirmationCodeIssued':
      if (state.status === 'none') return state
      return { ...state, code: { hash: event.data.code_hash, expires_at: event.data.expires_at, failed: 0 } }
    case 'ConfirmationFailed':
      if (state.status === 'none' || !state.code) return state
      return { ...state, code: { ...state.code, failed: state.code.failed + 1 } }
    case 'UserConfirmed':
      if (state.status === 'none') return state
      return { ...state, status: 'confirmed', code: null }
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
      const issued: ConfirmationCodeIssued = { type: 'ConfirmationCodeIssued', data: { user_uuid: state.user_uuid, code_hash: command.data.code_hash, code: command.data.code_sealed, expires_at: command.data.expires_at, issued_at: command.data.now } }
      return [issued]
    }
    case 'ConfirmUser':
      return confirm(command.data, state)
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
