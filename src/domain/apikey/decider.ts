import { DomainError } from '../shared.ts'
import type { ApiKeyCreated, ApiKeyEvent } from './events.ts'

export type ApiKeyState = { status: 'none' } | { status: 'usable' | 'revoked', user_uuid: string }

export const initialState = (): ApiKeyState => ({ status: 'none' })

export function evolve (state: ApiKeyState, event: ApiKeyEvent): ApiKeyState {
  switch (event.type) {
    case 'ApiKeyCreated': return { status: 'usable', user_uuid: event.data.user_uuid }
    case 'ApiKeyRevoked': return state.status === 'none' ? state : { ...state, status: 'revoked' }
    default: {
      const _exhaustive: never = event
      return state
    }
  }
}

export type ApiKeyCommand =
  | { type: 'CreateApiKey', data: ApiKeyCreated['data'] & { existing_keys: number, max_keys: number } }
  | { type: 'RevokeApiKey', data: { key_uuid: string, reason: string, now: string } }

/**
 * The API key decider.
 * @throws DomainError forbidden `create_api_key.limit_reached` when the plan's key cap is reached.
 * @throws DomainError conflict `create_api_key.exists` when the key stream exists.
 */
export function decide (command: ApiKeyCommand, state: ApiKeyState): ApiKeyEvent[] {
  switch (command.type) {
    case 'CreateApiKey': {
      if (state.status !== 'none') throw new DomainError('conflict', 'create_api_key.exists', 'key already exists')
      const { existing_keys: existing, max_keys: max, ...data } = command.data
      if (existing >= max) throw new DomainError('forbidden', 'create_api_key.limit_reached', `your plan allows ${max} API keys`)
      return [{ type: 'ApiKeyCreated', data }]
    }
    case 'RevokeApiKey':
      // Idempotent: revoking again changes nothing (interface: revoked_at kept unchanged).
      if (state.status !== 'usable') return []
      return [{ type: 'ApiKeyRevoked', data: { key_uuid: command.data.key_uuid, user_uuid: state.user_uuid, reason: command.data.reason, revoked_at: command.data.now } }]
    default: {
      const _exhaustive: never = command
      return []
    }
  }
}
