import type { Event } from '../shared.ts'
import type { Scope } from '../api-key/scopes.ts'

/**
 * An agent of the account (stream `agents-<user uuid>`, all of an account's agents, so
 * that the plan's cap is decided with one expected revision): a named, revocable
 * credential for automation with its own scopes. Only the SHA-256 of its token enters the
 * event; the raw token is returned once at creation.
 */
export type AgentCreated = Event<
  'AgentCreated',
  {
    agent_uuid: string
    user_uuid: string
    name: string
    scopes: Scope[]
    token_hash: string
    /** First characters of the raw token, for display ("sva_AbCd"). */
    token_prefix: string
    created_at: string
  }
>

/** The agent's token no longer authenticates; `revoked_at` never changes afterwards. */
export type AgentRevoked = Event<'AgentRevoked', { agent_uuid: string; user_uuid: string; reason: string; revoked_at: string }>

/** The account's usable agents carried forward (an in-stream snapshot every SNAPSHOT_EVERY events). */
export type AgentsSnapshotted = Event<'AgentsSnapshotted', { user_uuid: string; usable: string[]; snapshotted_at: string }>

export type AgentEvent = AgentCreated | AgentRevoked | AgentsSnapshotted
