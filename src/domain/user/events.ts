import type { Event } from '../shared.ts'

/** `email` is sealed with the account's data key (never in the clear). */
export type UserRegistered = Event<'UserRegistered', {
  user_uuid: string
  email: string
  password_hash: string
  locale: string
  registered_at: string
}>

/** `code` is the six-digit code sealed for the mailer; `code_hash` is an HMAC of it. */
export type ConfirmationCodeIssued = Event<'ConfirmationCodeIssued', {
  user_uuid: string
  code_hash: string
  code: string
  expires_at: string
  issued_at: string
}>

export type ConfirmationFailed = Event<'ConfirmationFailed', { user_uuid: string, failed_at: string }>

export type UserConfirmed = Event<'UserConfirmed', { user_uuid: string, confirmed_at: string }>

export type UserEvent = UserRegistered | ConfirmationCodeIssued | ConfirmationFailed | UserConfirmed

export const USER_EVENT_TYPES = ['UserRegistered', 'ConfirmationCodeIssued', 'ConfirmationFailed', 'UserConfirmed'] as const
