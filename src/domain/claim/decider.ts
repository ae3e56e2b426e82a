import type { ClaimEvent } from './events.ts'

export type ClaimState = { owner_uuid: string | null }

export const initialState = (): ClaimState => ({ owner_uuid: null })

export function evolve(_state: ClaimState, event: ClaimEvent): ClaimState {
  return event.type === 'ValueClaimed' ? { owner_uuid: event.data.owner_uuid } : { owner_uuid: null }
}

export type ClaimCommand =
  | { type: 'ClaimValue'; data: { owner_uuid: string; now: string } }
  | { type: 'ReleaseValue'; data: { owner_uuid: string; now: string } }

/**
 * Claims the value for `owner_uuid` (a no-op when it already belongs to someone), or
 * releases it (only its owner can; a no-op otherwise).
 */
export function decide(command: ClaimCommand, state: ClaimState): ClaimEvent[] {
  if (command.type === 'ReleaseValue') {
    if (state.owner_uuid !== command.data.owner_uuid) return []
    return [{ type: 'ClaimReleased', data: { owner_uuid: command.data.owner_uuid, released_at: command.data.now } }]
  }
  if (state.owner_uuid !== null) return []
  return [{ type: 'ValueClaimed', data: { owner_uuid: command.data.owner_uuid, claimed_at: command.data.now } }]
}

/** Every event carries the whole state: loading reads the last one only. */
export const snapshot = { types: ['ValueClaimed', 'ClaimReleased'] } as const
