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

export type SessionEvent = SessionStarted
