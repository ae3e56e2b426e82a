import { DomainError } from '../shared.ts'
import type { AgentCreated, AgentEvent } from './events.ts'

export type AgentState =
  | { status: 'none' }
  | { status: 'usable' | 'revoked', user_uuid: string }

export const initialState = (): AgentState => ({ status: 'none' })

export function evolve (state: AgentState, event: AgentEvent): AgentState {
  switch (event.type) {
    case 'AgentCreated': return { status: 'usable', user_uuid: event.data.user_uuid }
    case 'AgentRevoked': return state.status === 'none' ? state : { ...state, status: 'revoked' }
    default: {
      const _exhaustive: never = event
      return state
    }
  }
}

export type AgentCommand =
  | { type: 'CreateAgent', data: AgentCreated['data'] & { existing_agents: number, max_agents: number } }
  | { type: 'RevokeAgent', data: { agent_uuid: string, user_uuid: string, reason: string, now: string } }

/**
 * The agent decider (interface section 4, "Agents"; lifecycle "agent usable → revoked,
 * repeat call is idempotent").
 * @throws DomainError forbidden `create_agent.limit_reached` when the plan's agent cap is
 *   reached; conflict `create_agent.exists` when the stream exists; not_found
 *   `revoke_agent.not_found` for an unknown agent or one of another account.
 */
export function decide (command: AgentCommand, state: AgentState): AgentEvent[] {
  switch (command.type) {
    case 'CreateAgent': {
      if (state.status !== 'none') throw new DomainError('conflict', 'create_agent.exists', 'agent already exists')
      const { existing_agents: existing, max_agents: max, ...data } = command.data
      if (existing >= max) throw new DomainError('forbidden', 'create_agent.limit_reached', `your plan allows ${max} agents`)
      return [{ type: 'AgentCreated', data }]
    }
    case 'RevokeAgent':
      if (state.status === 'none' || state.user_uuid !== command.data.user_uuid) throw new DomainError('not_found', 'revoke_agent.not_found', 'no such agent')
      if (state.status === 'revoked') return []
      return [{ type: 'AgentRevoked', data: { agent_uuid: command.data.agent_uuid, user_uuid: state.user_uuid, reason: command.data.reason, revoked_at: command.data.now } }]
    default: {
      const _exhaustive: never = command
      return []
    }
  }
}
