import { DomainError } from '../shared.ts'
import type { SessionEvent, SessionRevoked, SessionStarted } from './events.ts'

export type SessionState =
  | { status: 'none' }
  | { status: 'active' | 'revoked', user_uuid: string, refresh_hash: string, spent: string[], expires_at: string }

export const initialState = (): SessionState => ({ status: 'none' })

export function evolve (state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionStarted':
      return { status: 'active', user_uuid: event.data.user_uuid, refresh_hash: event.data.refresh_hash, spent: [], expires_at: event.data.expires_at }
    case 'SessionRefreshed':
      if (state.status === 'none') return state
      return { ...state, refresh_hash: event.data.refresh_hash, spent: [...state.spent, state.refresh_hash], expires_at: event.data.expires_at }
    case 'SessionRevoked':
      if (state.status === 'none') return state
      return { ...state, status: 'revoked' }
    default: {
      const _exhaustive: never = event
      return state
    }
  }
}

export type SessionCommand =
  | { type: 'StartSession', data: SessionStarted['data'] }
  | { type: 'RefreshSession', data: { session_uuid: string, presented_hash: string, new_hash: string, expires_at: string, now: string } }
  | { type: 'RevokeSession', data: { session_uuid: string, reason: SessionRevoked['data']['reason'], now: string } }

const invalid = (): DomainError => new DomainError('unauthorized', 'refresh.invalid_token', 'the refresh token is invalid, expired or revoked; sign in again')

/**
 * The session decider (refresh tokens rotate on every use, OWASP ASVS 5.0 §7.2).
 * - RefreshSession with the current token → SessionRefreshed (the presented token is spent).
 * - RefreshSession with a spent token → SessionRevoked `refresh_token_reuse` (someone holds
 *   a copy: the whole session ends), returned as events *and* reported as invalid by the
 *   caller; with an unknown token, on a revoked or expired session → `refresh.invalid_token`.
 * - RevokeSession → SessionRevoked once; again → nothing (idempotent).
 * @throws DomainError conflict `session.exists`; unauthorized `refresh.invalid_token`.
 */
export function decide (command: SessionCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'StartSession':
      if (state.status !== 'none') throw new DomainError('conflict', 'session.exists', 'session already exists')
      return [{ type: 'SessionStarted', data: command.data }]
    case 'RefreshSession': {
      const d = command.data
      if (state.status !== 'active') throw invalid()
      if (state.spent.includes(d.presented_hash)) {
        return [{ type: 'SessionRevoked', data: { session_uuid: d.session_uuid, user_uuid: state.user_uuid, reason: 'refresh_token_reuse', revoked_at: d.now } }]
      }
      if (state.refresh_hash !== d.presented_hash || d.now >= state.expires_at) throw invalid()
      return [{ type: 'SessionRefreshed', data: { session_uuid: d.session_uuid, user_uuid: state.user_uuid, refresh_hash: d.new_hash, expires_at: d.expires_at, refreshed_at: d.now } }]
    }
    case 'RevokeSession':
      if (state.status !== 'active') return []
      return [{ type: 'SessionRevoked', data: { session_uuid: command.data.session_uuid, user_uuid: state.user_uuid, reason: command.data.reason, revoked_at: command.data.now } }]
    default: {
      const _exhaustive: never = command
      return []
    }
  }
}
