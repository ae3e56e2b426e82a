import { DomainError, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import type { CheckName } from '../checks.ts'
import type { Scope } from './scopes.ts'
import type { ApiKeyCreated, ApiKeyEvent, ApiKeysSnapshotted } from './events.ts'

/** A usable key, as far as decisions need it. */
export interface UsableKey {
  environment: 'live' | 'test'
  scopes: readonly Scope[]
  enabled_checks: readonly CheckName[]
}

/**
 * An account's keys (stream `apikeys-<user uuid>`): the usable ones only, so its size is
 * bounded by the plan's cap; revoked keys leave no trace in it.
 */
export interface ApiKeysState {
  user_uuid: string | null
  usable: ReadonlyMap<string, UsableKey>
}

/** Events between two ApiKeysSnapshotted. */
export const SNAPSHOT_EVERY = 100

export const initialState = (): ApiKeysState => ({ user_uuid: null, usable: new Map() })

export function evolve(state: ApiKeysState, event: ApiKeyEvent): ApiKeysState {
  switch (event.type) {
    case 'ApiKeyCreated': {
      const d = event.data
      return {
        user_uuid: d.user_uuid,
        usable: new Map(state.usable).set(d.key_uuid, { environment: d.environment, scopes: d.scopes, enabled_checks: d.enabled_checks })
      }
    }
    case 'ApiKeyRevoked': {
      const usable = new Map(state.usable)
      usable.delete(event.data.key_uuid)
      return { ...state, usable }
    }
    case 'ApiKeyUpdated': {
      const key = state.usable.get(event.data.key_uuid)
      if (!key || event.data.enabled_checks === undefined) return state
      return { ...state, usable: new Map(state.usable).set(event.data.key_uuid, { ...key, enabled_checks: event.data.enabled_checks }) }
    }
    case 'ApiKeysSnapshotted':
      return { user_uuid: event.data.user_uuid, usable: new Map(event.data.usable.map(({ key_uuid: k, ...rest }) => [k, rest])) }
    default:
      return ignoreUnknownEvent(event, state)
  }
}

/** The snapshot that carries `state` forward: the usable keys, their arrays copied. */
export function takeSnapshot(state: ApiKeysState, now: string): ApiKeysSnapshotted {
  const usable = [...state.usable].map(([k, v]) => ({ key_uuid: k, environment: v.environment, scopes: [...v.scopes], enabled_checks: [...v.enabled_checks] }))
  return { type: 'ApiKeysSnapshotted', data: { user_uuid: state.user_uuid ?? '', usable, snapshotted_at: now } }
}

export const snapshot = { types: ['ApiKeysSnapshotted'], every: SNAPSHOT_EVERY, take: takeSnapshot } as const

/**
 * What the creating credential holds (docs/interface.md §5: a credential never grants more
 * than it holds), and its environment: a test credential reaches test keys only.
 */
export interface Granter {
  scopes: readonly string[]
  enabled_checks: readonly string[]
  environment: 'live' | 'test'
}

/**
 * A credential works only in its own environment: a test key never mints, changes or revokes a live key. Live credentials
 * (sessions, live keys, agents) manage both.
 * @throws DomainError forbidden `<operation>.environment_not_held`.
 */
function requireEnvironment(operation: string, by: 'live' | 'test', key: 'live' | 'test'): void {
  if (by === 'test' && key === 'live')
    throw new DomainError('forbidden', `${operation}.environment_not_held`, 'a test credential cannot create, change or revoke a live key')
}

export type ApiKeyCommand =
  | { type: 'CreateApiKey'; data: ApiKeyCreated['data'] & { max_keys: number; granter: Granter } }
  | {
      type: 'UpdateApiKey'
      data: { key_uuid: string; name?: string; enabled_checks?: CheckName[]; plan_checks: readonly CheckName[]; granter: Granter; now: string }
    }
  | {
      type: 'RevokeApiKey'
      data: {
        key_uuid: string
        reason: string
        /** The revoking credential's environment. */
        environment: 'live' | 'test'
        now: string
      }
    }
  | { type: 'RevokeAllApiKeys'; data: { reason: string; now: string } }

/**
 * The API key decider (interface "API keys"; lifecycle "key usable → revoked").
 * - CreateApiKey → ApiKeyCreated, when the account holds fewer than `max_keys` usable keys
 *   (decided on this stream with its expected revision: concurrent creations never pass
 *   the cap) and the creating credential holds every scope and check it grants.
 * - UpdateApiKey → ApiKeyUpdated for a usable key of the account, with the fields given:
 *   the checks must be allowed by the plan (`plan_checks`) and held by the credential;
 *   nothing when they change nothing.
 * - RevokeApiKey → ApiKeyRevoked for a usable key of the account; nothing otherwise (a
 *   repeat keeps the first `revoked_at`; another account's key is not in this stream).
 * - RevokeAllApiKeys → ApiKeyRevoked for each usable key (account deletion).
 * @throws DomainError forbidden `create_api_key.limit_reached`, `create_api_key.scope_not_held`,
 *   `create_api_key.check_not_held`, `update_api_key.check_not_allowed`, `update_api_key.check_not_held`,
 *   `create_api_key|update_api_key|revoke_api_key.environment_not_held` (a test credential and a live key);
 *   forbidden `update_api_key.revoked` (a revoked key, or not the account's: the
 *   interface lists 403, not 409, for PATCH); conflict `create_api_key.exists`.
 *   (Interface "API keys": a rate limit is never writable: no command carries one.)
 */
export function decide(command: ApiKeyCommand, state: ApiKeysState): ApiKeyEvent[] {
  switch (command.type) {
    case 'CreateApiKey': {
      const { max_keys: max, granter, ...data } = command.data
      if (state.usable.has(data.key_uuid)) throw new DomainError('conflict', 'create_api_key.exists', 'key already exists')
      requireEnvironment('create_api_key', granter.environment, data.environment)
      const scopes = data.scopes.filter(s => !granter.scopes.includes(s))
      if (scopes.length > 0)
        throw new DomainError('forbidden', 'create_api_key.scope_not_held', `this credential cannot grant scopes it does not hold: ${scopes.join(', ')}`)
      const checks = data.enabled_checks.filter(c => !granter.enabled_checks.includes(c))
      if (checks.length > 0)
        throw new DomainError('forbidden', 'create_api_key.check_not_held', `this credential cannot enable checks it does not hold: ${checks.join(', ')}`)
      if (state.usable.size >= max) throw new DomainError('forbidden', 'create_api_key.limit_reached', `your plan allows ${max} API keys`)
      return [{ type: 'ApiKeyCreated', data }]
    }
    case 'UpdateApiKey': {
      const d = command.data
      const key = state.usable.get(d.key_uuid)
      if (!key) throw new DomainError('forbidden', 'update_api_key.revoked', 'a revoked key cannot be changed')
      requireEnvironment('update_api_key', d.granter.environment, key.environment)
      if (d.enabled_checks !== undefined) {
        const notAllowed = d.enabled_checks.filter(c => !d.plan_checks.includes(c))
        if (notAllowed.length > 0)
          throw new DomainError('forbidden', 'update_api_key.check_not_allowed', `your plan does not include: ${notAllowed.join(', ')}`)
        const notHeld = d.enabled_checks.filter(c => !d.granter.enabled_checks.includes(c))
        if (notHeld.length > 0)
          throw new DomainError('forbidden', 'update_api_key.check_not_held', `this credential cannot enable checks it does not hold: ${notHeld.join(', ')}`)
      }
      const checksChange = d.enabled_checks !== undefined && d.enabled_checks.join(',') !== key.enabled_checks.join(',')
      if (d.name === undefined && !checksChange) return []
      return [
        {
          type: 'ApiKeyUpdated',
          data: {
            key_uuid: d.key_uuid,
            user_uuid: state.user_uuid!,
            ...(d.name !== undefined && { name: d.name }),
            ...(d.enabled_checks !== undefined && { enabled_checks: d.enabled_checks }),
            updated_at: d.now
          }
        }
      ]
    }
    case 'RevokeApiKey': {
      const key = state.usable.get(command.data.key_uuid)
      if (!key) return []
      requireEnvironment('revoke_api_key', command.data.environment, key.environment)
      return [
        {
          type: 'ApiKeyRevoked',
          data: { key_uuid: command.data.key_uuid, user_uuid: state.user_uuid!, reason: command.data.reason, revoked_at: command.data.now }
        }
      ]
    }
    case 'RevokeAllApiKeys':
      return [...state.usable.keys()].map(k => ({
        type: 'ApiKeyRevoked' as const,
        data: { key_uuid: k, user_uuid: state.user_uuid!, reason: command.data.reason, revoked_at: command.data.now }
      }))
    default:
      return noEventsForUnknown(command)
  }
}
