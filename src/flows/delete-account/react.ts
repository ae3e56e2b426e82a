import type { FlowStep, FlowTrigger } from '../../eventsourcing/flow.ts'

/** What is left of a deleted account, as the reaction found it. */
export interface ErasureState {
  /** Whether the account's stream says it is deleted (a reaction to anything else does nothing). */
  deleted: boolean
  /** Whether it has API keys, agents or webhook endpoints left. */
  api_keys: boolean
  agents: boolean
  webhooks: boolean
  /** Whether its address's one-account claim still names it (it can register again once released). */
  claimed: boolean
  /** Whether its data key still exists (every address and code sealed with it readable). */
  keyed: boolean
}

/** The steps of an erasure, in their order; each an idempotent command. */
export type ErasureCommand = { user_uuid: string } & (
  | { type: 'RevokeAllApiKeys' }
  | { type: 'RevokeAllAgents' }
  | { type: 'DeleteAllWebhooks' }
  | { type: 'ReleaseClaim' }
  | { type: 'DestroyDataKey' }
)

/**
 * UserDeleted → the account's credentials end and its personal data is erased (interface
 * DELETE /api/users/{uuid}; docs/design/architecture.md crypto-shredding): every API key and agent
 * revoked, every webhook endpoint deleted, its address released, and last its data key
 * destroyed (the release needs the address, which the key opens). Its sessions need no
 * step: UserDeleted itself voids them (the auth check and a refresh need an active
 * account) and erases their read model. Only what is left is done, so a run after a crash
 * finishes what the first began.
 */
export function react(trigger: FlowTrigger, state: ErasureState): ReadonlyArray<FlowStep<ErasureCommand>> {
  if (trigger.type !== 'UserDeleted' || !state.deleted) return []
  const user_uuid = String(trigger.data.user_uuid)
  const steps: Array<FlowStep<ErasureCommand>> = []
  if (state.api_keys) steps.push({ label: 'api_keys', command: { type: 'RevokeAllApiKeys', user_uuid } })
  if (state.agents) steps.push({ label: 'agents', command: { type: 'RevokeAllAgents', user_uuid } })
  if (state.webhooks) steps.push({ label: 'webhooks', command: { type: 'DeleteAllWebhooks', user_uuid } })
  if (state.claimed && state.keyed) steps.push({ label: 'release', command: { type: 'ReleaseClaim', user_uuid } })
  if (state.keyed) steps.push({ label: 'shred', command: { type: 'DestroyDataKey', user_uuid } })
  return steps
}
