import type { Event } from '../shared.ts'

/**
 * Uniqueness claim (docs/design/architecture.md): appended with expected revision `no_stream` to a
 * stream named after a blind index, e.g. `user_email-<hmac(email)>`; `owner_uuid` is the
 * aggregate that holds the claimed value.
 */
export type ValueClaimed = Event<'ValueClaimed', { owner_uuid: string; claimed_at: string }>

/** The owner let the value go (account deleted): it can be claimed again. */
export type ClaimReleased = Event<'ClaimReleased', { owner_uuid: string; released_at: string }>

export type ClaimEvent = ValueClaimed | ClaimReleased
