import { DomainError, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import type { Scope } from '../api-key/scopes.ts'
import type { AgentCreated, AgentEvent, AgentsSnapshotted } from './events.ts'

/** An account's agents (stream `agents-<user uuid>`): the usable ones only, bounded by the plan's cap. */
export interface AgentsState {
  user_uuid: string | null
  usable: ReadonlySet<string>
}

/** Events between two AgentsSnapshotted. */
export const SNAPSHOT_EVERY = 100

export const initialState = (): AgentsState => ({ user_uuid: null, usable: new Set() })

export function evolve(state: AgentsState, event: AgentEvent): AgentsState {
  switch (event.type) {
    case 'AgentCreated':
      return { user_uuid: event.data.user_uuid, usable: new Set(state.usable).add(event.data.agent_uuid) }
    case 'AgentRevoked': {
      const usable = new Set(state.usable)
      usable.delete(event.data.agent_uuid)
      return { ...state, usable }
    }
    case 'AgentsSnapshotted':
      return { user_uuid: event.data.user_uuid, usable: new Set(event.data.usable) }
    default:
      return ignoreUnknownEvent(event, state)
  }
}

export function takeSnapshot(state: AgentsState, now: string): AgentsSnapshotted {
  return { type: 'AgentsSnapshotted', data: { user_uuid: state.user_uuid ?? '', usable: [...state.usable], snapshotted_at: now } }
}

export const snapshot = { types: ['AgentsSnapshotted'], every: SNAPSHOT_EVERY, take: takeSnapshot } as const

export type AgentCommand =
  | { type: 'CreateAgent'; data: AgentCreated['data'] & { max_agents: number; plan_scopes: readonly Scope[] } }
  | { type: 'RevokeAgent'; data: { agent_uuid: string; reason: string; now: string } }
  | { type: 'RevokeAllAgents'; data: { reason: string; now: string } }

/**
 * The agent decider (docs/interface.md §4, "Agents"; lifecycle "agent usable → revoked,
 * repeat call is idempotent").
 * - CreateAgent → AgentCreated when the plan allows every scope asked for and the account
 *   holds fewer than `max_agents` usable agents (decided with this stream's expected
 *   revision, so concurrent creations never pass the cap).
 * - RevokeAgent → AgentRevoked for a usable agent of the account; nothing otherwise.
 * - RevokeAllAgents → AgentRevoked for each usable agent (account deletion).
 * @throws DomainError forbidden `create_agent.scope_not_allowed`, `create_agent.limit_reached`;
 *   conflict `create_agent.exists`.
 */
export function decide(command: AgentCommand, state: AgentsState): AgentEvent[] {
  switch (command.type) {
    case 'CreateAgent': {
      const { max_agents: max, plan_scopes: allowed, ...data } = command.data
      if (state.usable.has(data.agent_uuid)) throw new DomainError('conflict', 'create_agent.exists', 'agent already exists')
      const refused = data.scopes.filter(s => !allowed.includes(s))
      if (refused.length > 0)
        throw new DomainError('forbidden', 'create_agent.scope_not_allowed', `your plan does not allow agents these scopes: ${refused.join(', ')}`)
      if (state.usable.size >= max) throw new DomainError('forbidden', 'create_agent.limit_reached', `your plan allows ${max} agents`)
      return [{ type: 'AgentCreated', data }]
    }
    case 'RevokeAgent':
      if (!state.usable.has(command.data.agent_uuid)) return []
      return [
        {
          type: 'AgentRevoked',
          data: { agent_uuid: command.data.agent_uuid, user_uuid: state.user_uuid!, reason: command.data.reason, revoked_at: command.data.now }
        }
      ]
    case 'RevokeAllAgents':
      return [...state.usable].map(a => ({
        type: 'AgentRevoked' as const,
        data: { agent_uuid: a, user_uuid: state.user_uuid!, reason: command.data.reason, revoked_at: command.data.now }
      }))
    default:
      return noEventsForUnknown(command)
  }
}
