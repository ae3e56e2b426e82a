import type { Event } from '../shared.ts'

/** A signed-in session; `refresh_hash` is the SHA-256 of its refresh token. */
export type SessionStarted = Event<
  'SessionStarted',
  {
    session_uuid: string
    user_uuid: string
    refresh_hash: string
    expires_at: string
    started_at: string
    method: 'confirmation' | 'password' | 'oauth'
    /**
     * An OAuth grant (method `oauth`): the client it was authorized for and the scopes the
     * account consented to; its access tokens carry them and reach nothing else. Absent or
     * null on sign-in sessions.
     */
    grant?: { client_id: string; scopes: string[] } | null
    /**
     * The client it was started from: `id` an HMAC of the account, the user agent and the
     * network (IPv4 /24, IPv6 /48) — never the address itself — and a `label` such as
     * "Firefox on Linux". Absent on sessions started before it existed.
     */
    client?: { id: string; label: string } | null
  }
>

/**
 * The refresh token was rotated: `rotated_hash` (the token presented) is replaced by
 * `refresh_hash`, the new one. `grace`: the token presented was the one the last rotation
 * replaced, presented again within the reuse grace (a second tab refreshing at the same
 * time): the new token joins the current ones instead of replacing them. Events before
 * these fields rotated the current token (`rotated_hash` absent, `grace` false).
 */
export type SessionRefreshed = Event<
  'SessionRefreshed',
  {
    session_uuid: string
    user_uuid: string
    refresh_hash: string
    expires_at: string
    refreshed_at: string
    rotated_hash?: string
    grace?: boolean
  }
>

/** The session ended: logout, revoked by its owner, a spent refresh token presented again, or its account banned or deleted. */
export type SessionRevoked = Event<
  'SessionRevoked',
  {
    session_uuid: string
    user_uuid: string
    reason: 'logout' | 'revoked' | 'refresh_token_reuse' | 'account_inactive' | 'lifetime_reached'
    revoked_at: string
  }
>

/** The session's state carried forward (an in-stream snapshot every SNAPSHOT_EVERY events). */
export type SessionSnapshotted = Event<'SessionSnapshotted', { user_uuid: string; state: Record<string, unknown>; snapshotted_at: string }>

export type SessionEvent = SessionStarted | SessionRefreshed | SessionRevoked | SessionSnapshotted
