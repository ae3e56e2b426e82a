import type { Event } from '../shared.ts'
import type { CheckName } from '../checks.ts'
import type { Scope } from './scopes.ts'

/**
 * A key of the account (stream `apikeys-<user uuid>`, all of an account's keys, so that
 * the plan's cap is decided with one expected revision). `key_hash` is the SHA-256 of the
 * raw key; the raw key never enters an event.
 */
export type ApiKeyCreated = Event<
  'ApiKeyCreated',
  {
    key_uuid: string
    user_uuid: string
    name: string
    environment: 'live' | 'test'
    key_hash: string
    /** First characters of the raw key, for display ("svc_test_AbCd"). */
    key_prefix: string
    scopes: Scope[]
    enabled_checks: CheckName[]
    rate_limit_per_minute: number
    created_at: string
  }
>

/** The key no longer authenticates; `revoked_at` never changes afterwards. */
export type ApiKeyRevoked = Event<'ApiKeyRevoked', { key_uuid: string; user_uuid: string; reason: string; revoked_at: string }>

/** The key's name and/or enabled checks changed (PATCH /api/keys/{uuid}); absent fields kept theirs. */
export type ApiKeyUpdated = Event<'ApiKeyUpdated', { key_uuid: string; user_uuid: string; name?: string; enabled_checks?: CheckName[]; updated_at: string }>

/** The account's usable keys carried forward (an in-stream snapshot every SNAPSHOT_EVERY events). */
export type ApiKeysSnapshotted = Event<
  'ApiKeysSnapshotted',
  {
    user_uuid: string
    usable: Array<{ key_uuid: string; environment: 'live' | 'test'; scopes: Scope[]; enabled_checks: CheckName[] }>
    snapshotted_at: string
  }
>

export type ApiKeyEvent = ApiKeyCreated | ApiKeyRevoked | ApiKeyUpdated | ApiKeysSnapshotted
