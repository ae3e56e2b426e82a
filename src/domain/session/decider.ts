import { DomainError, isBefore, isAtOrAfter, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import type { SessionEvent, SessionRevoked, SessionSnapshotted, SessionStarted } from './events.ts'

export type SessionState =
  | { status: 'none' }
  | {
      status: 'active' | 'revoked'
      user_uuid: string
      started_at: string
      /** SHA-256 of the newest refresh token. */
      refresh_hash: string
      /**
       * The other refresh tokens still valid: issued from `previous` within the reuse grace
       * beside `refresh_hash` (two tabs refreshing at once each got one). The next rotation,
       * from any of them, retires the rest. Absent in states from before it: none.
       */
      siblings?: string[]
      /**
       * The token the last rotation replaced, and when: presented again within the reuse grace
       * it gets a token of its own (a sibling); after it, it revokes the session. Absent in
       * states from before it: none.
       */
      previous?: { hash: string; rotated_at: string } | null
      /** Hashes of the latest SPENT_MEMORY retired refresh tokens (presenting one again revokes the session). */
      spent: string[]
      expires_at: string
      /** An OAuth grant's client and consented scopes (null for a sign-in session). */
      grant?: { client_id: string; scopes: string[] } | null
    }

/**
 * A session's absolute lifetime (ms; OWASP ASVS 5.0 V7.3.2): refreshing never carries it
 * past this from its start; then the account signs in again.
 */
export const SESSION_MAX_LIFETIME_MS = 90 * 86_400_000

/** Retired refresh tokens remembered for reuse detection (besides `previous`); an older one is simply invalid. */
export const SPENT_MEMORY = 32
/**
 * Tokens one rotation's replaced token may still get within the reuse grace (tabs opened
 * together, a session restored with many tabs). One more is no browser's doing: it revokes
 * the session as a reuse does, and it bounds the state.
 */
export const MAX_GRACE_SIBLINGS = 16
/** Events between two SessionSnapshotted (a session refreshed every 15 minutes for months). */
export const SNAPSHOT_EVERY = 100

export const initialState = (): SessionState => ({ status: 'none' })

export function evolve(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionStarted':
      return {
        status: 'active',
        user_uuid: event.data.user_uuid,
        started_at: event.data.started_at,
        refresh_hash: event.data.refresh_hash,
        siblings: [],
        previous: null,
        spent: [],
        expires_at: event.data.expires_at,
        grant: event.data.grant ?? null
      }
    case 'SessionSnapshotted':
      return { ...(event.data.state as unknown as Exclude<SessionState, { status: 'none' }>) }
    case 'SessionRefreshed': {
      if (state.status === 'none') return state
      const siblings = state.siblings ?? []
      // Within the grace: one more current token, the one it was issued from stays `previous`.
      if (event.data.grace === true)
        return { ...state, refresh_hash: event.data.refresh_hash, siblings: [...siblings, state.refresh_hash], expires_at: event.data.expires_at }
      // A rotation: the token presented becomes `previous`; the one before it and the other current ones retire.
      const from = event.data.rotated_hash ?? state.refresh_hash
      const retired = [...(state.previous ? [state.previous.hash] : []), ...[state.refresh_hash, ...siblings].filter(h => h !== from)]
      return {
        ...state,
        refresh_hash: event.data.refresh_hash,
        siblings: [],
        previous: { hash: from, rotated_at: event.data.refreshed_at },
        spent: [...state.spent, ...retired].slice(-SPENT_MEMORY),
        expires_at: event.data.expires_at
      }
    }
    case 'SessionRevoked':
      if (state.status === 'none') return state
      return { ...state, status: 'revoked' }
    default:
      return ignoreUnknownEvent(event, state)
  }
}

export function takeSnapshot(state: SessionState, now: string): SessionSnapshotted {
  const s = state as Exclude<SessionState, { status: 'none' }>
  return { type: 'SessionSnapshotted', data: { user_uuid: s.user_uuid, state: { ...s } as unknown as Record<string, unknown>, snapshotted_at: now } }
}

export const snapshot = { types: ['SessionSnapshotted', 'SessionStarted'], every: SNAPSHOT_EVERY, take: takeSnapshot } as const

export type SessionCommand =
  | { type: 'StartSession'; data: SessionStarted['data'] }
  | {
      type: 'Refresh'
      /** `grace_ms`: how long after a rotation the token it replaced may be presented again (`REFRESH_TOKEN_REUSE_GRACE_S`; 0: never). */
      data: { session_uuid: string; presented_hash: string; new_hash: string; expires_at: string; now: string; grace_ms: number; account: AccountStanding }
    }
  /** With `presented_hash` (logout by cookie), only when it is one of the session's current refresh tokens. */
  | { type: 'RevokeSession'; data: { session_uuid: string; reason: SessionRevoked['data']['reason']; presented_hash?: string; now: string } }

/**
 * Where the session's account stands, as its user stream says (a fact passed in by the
 * command handler): whether it may sign in, and from when its sessions are valid (a ban
 * voids every session started before it).
 */
export interface AccountStanding {
  active: boolean
  sessions_valid_from: string | null
}

type Live = Exclude<SessionState, { status: 'none' }>

/** The refresh tokens (hashes) that refresh the session now: the newest and its siblings. */
const currentTokens = (state: Live): string[] => [state.refresh_hash, ...(state.siblings ?? [])]

/** Whether `hash` is a refresh token the session issued and still remembers: current, replaced last, or retired. */
export function knowsRefreshToken(state: Live, hash: string): boolean {
  return currentTokens(state).includes(hash) || state.previous?.hash === hash || state.spent.includes(hash)
}

const invalid = (): DomainError => new DomainError('unauthorized', 'refresh.invalid_token', 'the refresh token is invalid, expired or revoked; sign in again')

/**
 * The session decider (refresh tokens rotate on every use, OWASP ASVS 5.0 §7.2; reuse
 * detection, RFC 9700 §4.14.2).
 * - Refresh with a current token of an active account → SessionRefreshed: a new
 *   token replaces every current one; the presented one becomes `previous`.
 * - Refresh with `previous` less than `grace_ms` after it was replaced (a second tab
 *   that sent the same cookie at the same time) → SessionRefreshed `grace`: a new token of
 *   its own beside the current ones, the session stays (as Auth0's reuse interval and Okta's
 *   grace period: only the token replaced last, only within the grace, at most
 *   MAX_GRACE_SIBLINGS times).
 * - Refresh with `previous` after the grace (or past MAX_GRACE_SIBLINGS), or with a
 *   retired token → SessionRevoked `refresh_token_reuse` (someone holds a copy: the whole
 *   session ends); for an account that may not sign in (banned, deleted) or a session its
 *   ban voided → SessionRevoked `account_inactive`. Both are returned as events *and*
 *   reported as invalid by the caller; with an unknown token, on a revoked or expired
 *   session → `refresh.invalid_token`.
 * - RevokeSession → SessionRevoked once; again → nothing (idempotent).
 * @throws DomainError conflict `session.exists`; unauthorized `refresh.invalid_token`.
 */
export function decide(command: SessionCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'StartSession':
      if (state.status !== 'none') throw new DomainError('conflict', 'session.exists', 'session already exists')
      return [{ type: 'SessionStarted', data: command.data }]
    case 'Refresh': {
      const d = command.data
      if (state.status !== 'active') throw invalid()
      const ids = { session_uuid: d.session_uuid, user_uuid: state.user_uuid }
      if (!d.account.active || (d.account.sessions_valid_from !== null && isBefore(state.started_at, d.account.sessions_valid_from))) {
        return [{ type: 'SessionRevoked', data: { ...ids, reason: 'account_inactive', revoked_at: d.now } }]
      }
      const reuse: SessionEvent[] = [{ type: 'SessionRevoked', data: { ...ids, reason: 'refresh_token_reuse', revoked_at: d.now } }]
      let grace = false
      if (!currentTokens(state).includes(d.presented_hash)) {
        const previous = state.previous ?? null
        if (previous?.hash === d.presented_hash) {
          const within = Date.parse(d.now) - Date.parse(previous.rotated_at) < d.grace_ms
          if (!within || (state.siblings?.length ?? 0) >= MAX_GRACE_SIBLINGS) return reuse
          grace = true
        } else if (state.spent.includes(d.presented_hash)) return reuse
        else throw invalid()
      }
      if (isAtOrAfter(d.now, state.expires_at)) throw invalid()
      const end = Date.parse(state.started_at) + SESSION_MAX_LIFETIME_MS
      if (Date.parse(d.now) >= end) return [{ type: 'SessionRevoked', data: { ...ids, reason: 'lifetime_reached', revoked_at: d.now } }]
      const expires = Date.parse(d.expires_at) > end ? new Date(end).toISOString() : d.expires_at
      return [
        {
          type: 'SessionRefreshed',
          data: { ...ids, refresh_hash: d.new_hash, expires_at: expires, refreshed_at: d.now, rotated_hash: d.presented_hash, ...(grace && { grace: true }) }
        }
      ]
    }
    case 'RevokeSession':
      if (state.status !== 'active') return []
      if (command.data.presented_hash !== undefined && !currentTokens(state).includes(command.data.presented_hash)) return []
      return [
        {
          type: 'SessionRevoked',
          data: { session_uuid: command.data.session_uuid, user_uuid: state.user_uuid, reason: command.data.reason, revoked_at: command.data.now }
        }
      ]
    default:
      return noEventsForUnknown(command)
  }
}
