import type { NotificationEvent } from './events.ts'

/** How far the account has seen its feed (a global position; 0: nothing seen). */
export interface SeenState {
  seen_up_to: number
}

export const initialState = (): SeenState => ({ seen_up_to: 0 })

export function evolve(_state: SeenState, event: NotificationEvent): SeenState {
  return { seen_up_to: event.data.up_to }
}

/** Every event carries the whole state: loading reads the last one only. */
export const snapshot = { types: ['NotificationsSeen'] } as const

export type NotificationCommand = { type: 'MarkNotificationsSeen'; data: { user_uuid: string; up_to: number; now: string } }

/**
 * The seen cursor of a feed (interface `POST /api/notifications/seen`): it moves forward
 * to `up_to`, never back (marking an older cursor changes nothing).
 */
export function decide(command: NotificationCommand, state: SeenState): NotificationEvent[] {
  const d = command.data
  return d.up_to > state.seen_up_to ? [{ type: 'NotificationsSeen', data: { user_uuid: d.user_uuid, up_to: d.up_to, seen_at: d.now } }] : []
}
