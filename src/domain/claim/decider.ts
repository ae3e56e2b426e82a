import type { ClaimEvent } from './events.ts'

export type ClaimState = { owner_uuid: string | null }

export const initialState = (): ClaimState => ({ owner_uuid: null })

export function evolve (_state: ClaimState, event: ClaimEvent): ClaimState {
  return { owner_uuid: event.data.owner_uuid }
}

export type ClaimCommand = { type: 'ClaimValue', data: { owner_uuid: string, now: string } }

/** Claims the value for `owner_uuid`; a no-op when it already belongs to someone. */
export function decide (command: ClaimCommand, state: ClaimState): ClaimEvent[] {
  if (state.owner_uuid !== null) return []
  return [{ type: 'ValueClaimed', data: { owner_uuid: command.data.owner_uuid, claimed_at: command.data.now } }]
}
