import { DomainError } from '../shared.ts'
import type { SessionEvent, SessionStarted } from './events.ts'

export type SessionState = { status: 'none' } | { status: 'active', user_uuid: string, refresh_hash: string, expires_at: string }

export const initialState = (): SessionState => ({ status: 'none' })

export function evolve (state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionStarted': return { status: 'active', user_uuid: event.data.user_uuid, refresh_hash: event.data.refresh_hash, expires_at: event.data.expires_at }
    default: {
      const _exhaustive: never = event.type
      return state
    }
  }
}

export type SessionCommand = { type: 'StartSession', data: SessionStarted['data'] }

/** @throws DomainError conflict `session.exists` when the session stream exists. */
export function decide (command: SessionCommand, state: SessionState): SessionEvent[] {
  if (state.status !== 'none') throw new DomainError('conflict', 'session.exists', 'session already exists')
  return [{ type: 'SessionStarted', data: command.data }]
}
