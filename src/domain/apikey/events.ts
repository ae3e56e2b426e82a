import type { Event } from '../shared.ts'
import type { CheckName } from '../checks.ts'
import type { Scope } from './scopes.ts'

/** `key_hash` is the SHA-256 of the raw key; the raw key never enters an event. */
export type ApiKeyCreated = Event<'ApiKeyCreated', {
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
}>

/** The key no longer authenticates; `revoked_at` never changes afterwards. */
export type ApiKeyRevoked = Event<'ApiKeyRevoked', { key_uuid: string, user_uuid: string, reason: string, revoked_at: string }>

export type ApiKeyEvent = ApiKeyCreated | ApiKeyRevoked
