import type { FlowStep, FlowTrigger } from '../../eventsourcing/flow.ts'

/** What the grant of an operator's plan change needs to know: the period's tokens, and whether the wallet holds that grant. */
export interface PlanGrantState {
  grant: { grant_uuid: string; amount: number; plan: string; reason: string } | null
  granted: boolean
}

/** The one step: the new period's tokens granted to the account's wallet. */
export type PlanGrantCommand = { type: 'GrantPeriodTokens'; user_uuid: string } & NonNullable<PlanGrantState['grant']>

/**
 * PlanStarted or PlanChanged that an operator made granting the period (`grant_period`) →
 * one period's tokens of the new plan and cycle, as an invoice would (`svc subscription
 * set`, docs/operations.md). Nothing once the wallet holds the grant (its id,
 * `operator-<event id>`, is the same for every try), nor for a change without a grant
 * (Stripe's invoices grant their own, by invoice id).
 */
export function react(trigger: FlowTrigger, state: PlanGrantState): ReadonlyArray<FlowStep<PlanGrantCommand>> {
  if (trigger.type !== 'PlanStarted' && trigger.type !== 'PlanChanged') return []
  if (trigger.data.grant_period !== true || state.grant === null || state.granted || state.grant.amount <= 0) return []
  return [{ label: 'grant', command: { type: 'GrantPeriodTokens', user_uuid: String(trigger.data.user_uuid), ...state.grant } }]
}
