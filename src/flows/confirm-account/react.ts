import type { FlowStep, FlowTrigger } from '../../eventsourcing/flow.ts'

/** What the Free plan's grant reaction needs to know: the plan's grant, whether the wallet holds it, whether the account still exists. */
export interface GrantState {
  grant: { grant_uuid: string; amount: number; plan: string; reason: string }
  granted: boolean
  deleted: boolean
}

/** The one step: the plan's tokens granted to the account's wallet. */
export type GrantCommand = { type: 'GrantPlanTokens'; user_uuid: string } & GrantState['grant']

/**
 * UserConfirmed → the Free plan's tokens (docs/interface.md §3: a confirmed account holds
 * the Free plan; its monthly tokens are granted at confirmation). Nothing once the wallet
 * holds the grant (its id, `plan-<code>-initial`, is the same for every try) or the account
 * is gone.
 */
export function react(trigger: FlowTrigger, state: GrantState): ReadonlyArray<FlowStep<GrantCommand>> {
  if (trigger.type !== 'UserConfirmed' || state.granted || state.deleted || state.grant.amount <= 0) return []
  return [{ label: 'grant', command: { type: 'GrantPlanTokens', user_uuid: String(trigger.data.user_uuid), ...state.grant } }]
}
