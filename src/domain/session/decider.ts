import { DomainError, isBefore, isAtOrAfter, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import type { SessionEvent, SessionRevoked, SessionSnapshotted, SessionStarted } from './events.ts'

export type SessionState =
  | { status: 'none' }
  | {
      status: 'active' | 'revoked'
      user_uuid: string
      started_at: string
      refresh_hash: string
      /** Hashes of the latest SPENT_MEMORY spent refresh tokens (presenting one again revokes the session). */
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

/** Spent refresh tokens remembered for reuse detection; an older one is simply invalid. */
export const SPENT_MEMORY = 32
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
        spent: [],
        expires_at: event.data.expires_at,
        grant: event.data.grant ?? null
      }
    case 'SessionSnapshotted':
      return { ...(event.data.state as unknown as Exclude<SessionState, { status: 'none' }>) }
    case 'SessionRefreshed':
      if (state.status === 'none') return state
      return {
        ...state,
        refresh_hash: event.data.refresh_hash,
        spent: [...state.spent, state.refresh_hash].slice(-SPENT_MEMORY),
        expires_at: event.data.expires_at
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
      type: 'RefreshSession'
      data: { session_uuid: string; presented_hash: string; new_hash: string; expires_at: string; now: string; account: AccountStanding }
    }
  /** With `presented_hash` (logout by cookie), only when it is the session's current refresh token. */
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

const invalid = (): DomainError => new DomainError('unauthorized', 'refresh.invalid_token', 'the refresh token is invalid, expired or revoked; sign in again')

/**
 * The session decider (refresh tokens rotate on every use, OWASP ASVS 5.0 §7.2).
 * - RefreshSession with the current token of an active account → SessionRefreshed (the
 *   presented token is spent).
 * - RefreshSession with a spent token → SessionRevoked `refresh_token_reuse` (someone holds
 *   a copy: the whole session ends); for an account that may not sign in (banned, deleted)
 *   or a session its ban voided → SessionRevoked `account_inactive`. Both are returned as
 *   events *and* reported as invalid by the caller; with an unknown token, on a revoked or
 *   expired session → `refresh.invalid_token`.
 * - RevokeSession → SessionRevoked once; again → nothing (idempotent).
 * @throws DomainError conflict `session.exists`; unauthorized `refresh.invalid_token`.
 */
export function decide(command: SessionCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'StartSession':
      if (state.status !== 'none') throw new DomainError('conflict', 'session.exists', 'session already exists')
      return [{ type: 'SessionStarted', data: command.data }]
    case 'RefreshSession': {
      const d = command.data
      if (state.status !== 'active') throw invalid()
      const ids = { session_uuid: d.session_uuid, user_uuid: state.user_uuid }
      if (!d.account.active || (d.account.sessions_valid_from !== null && isBefore(state.started_at, d.account.sessions_valid_from))) {
        return [{ type: 'SessionRevoked', data: { ...ids, reason: 'account_inactive', revoked_at: d.now } }]
      }
      if (state.spent.includes(d.presented_hash)) return [{ type: 'SessionRevoked', data: { ...ids, reason: 'refresh_token_reuse', revoked_at: d.now } }]
      if (state.refresh_hash !== d.presented_hash || isAtOrAfter(d.now, state.expires_at)) throw invalid()
      const end = Date.parse(state.started_at) + SESSION_MAX_LIFETIME_MS
      if (Date.parse(d.now) >= end) return [{ type: 'SessionRevoked', data: { ...ids, reason: 'lifetime_reached', revoked_at: d.now } }]
      const expires = Date.parse(d.expires_at) > end ? new Date(end).toISOString() : d.expires_at
      return [{ type: 'SessionRefreshed', data: { ...ids, refresh_hash: d.new_hash, expires_at: expires, refreshed_at: d.now } }]
    }
    case 'RevokeSession':
      if (state.status !== 'active') return []
      if (command.data.presented_hash !== undefined && command.data.presented_hash !== state.refresh_hash) return []
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
