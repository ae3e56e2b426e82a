import { DomainError } from '../shared.ts'
import type { ApiKeyCreated, ApiKeyEvent } from './events.ts'

export type ApiKeyState = { status: 'none' } | { status: 'usable', user_uuid: string }

export const initialState = (): ApiKeyState => ({ status: 'none' })

export function evolve (state: ApiKeyState, event: ApiKeyEvent): ApiKeyState {
  switch (event.type) {
    case 'ApiKeyCreated': return { status: 'usable', user_uuid: event.data.user_uuid }
    default: {
      const _exhaustive: never = event.type
      return state
    }
  }
}

export type ApiKeyCommand = { type: 'CreateApiKey', data: ApiKeyCreated['data'] & { existing_keys: number, max_keys: number } }

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
    default: {
      const _exhaustive: never = command.type
      return []
    }
  }
}
