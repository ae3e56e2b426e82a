import type { FlowStep, FlowTrigger } from '../../eventsourcing/flow.ts'

/** What releasing the previous address needs to know: whether the account still holds its claim, and still does not use it. */
export interface PreviousClaim {
  /** The previous address's claim still names the account, and the account's address now is another. */
  held: boolean
}

/** The one step: the previous address's claim released (ReleaseValue on its claim stream); the address as the event holds it, sealed. */
export type ReleaseCommand = { type: 'ReleasePreviousEmail'; user_uuid: string; previous_email: string }

/**
 * EmailChanged → the previous address is released, so it can register again (interface
 * POST /api/auth/verify-email-change: "the old address is released"). Nothing once it is
 * released, when the account has changed back to it since, or for an event recorded before
 * `previous_email` existed.
 */
export function react(trigger: FlowTrigger, state: PreviousClaim): ReadonlyArray<FlowStep<ReleaseCommand>> {
  if (trigger.type !== 'EmailChanged' || typeof trigger.data.previous_email !== 'string' || !state.held) return []
  return [
    {
      label: 'release',
      command: { type: 'ReleasePreviousEmail', user_uuid: String(trigger.data.user_uuid), previous_email: trigger.data.previous_email }
    }
  ]
}
