import type { Event } from '../shared.ts'

/** A signed-in session; `refresh_hash` is the SHA-256 of its refresh token. */
export type SessionStarted = Event<'SessionStarted', {
  session_uuid: string
  user_uuid: string
  refresh_hash: string
  expires_at: string
  started_at: string
  method: 'confirmation' | 'password'
}>

/** The refresh token was rotated: the old one is spent, `refresh_hash` is the new one. */
export type SessionRefreshed = Event<'SessionRefreshed', {
  session_uuid: string
  user_uuid: string
  refresh_hash: string
  expires_at: string
  refreshed_at: string
}>

/** The session ended: logout, revoked by its owner, or a spent refresh token was presented again. */
export type SessionRevoked = Event<'SessionRevoked', {
  session_uuid: string
  user_uuid: string
  reason: 'logout' | 'revoked' | 'refresh_token_reuse'
  revoked_at: string
}>

export type SessionEvent = SessionStarted | SessionRefreshed | SessionRevoked
