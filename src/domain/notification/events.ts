import type { Event } from '../shared.ts'

/**
 * The account has seen its notifications up to a position of the feed (stream
 * `notifications-<user uuid>`). `up_to` only moves forward; each event carries the whole state.
 */
export type NotificationsSeen = Event<'NotificationsSeen', { user_uuid: string; up_to: number; seen_at: string }>

export type NotificationEvent = NotificationsSeen
