import type { RecordedEvent } from '../ports/event-store.ts'
import type { ApiKeyCreated, ApiKeyRevoked, ApiKeyUpdated } from '../domain/api-key/events.ts'
import { credentialCollection, revoked, type CredentialDoc } from './credentials.ts'
import { foldProjection, type Folded } from '../eventsourcing/projection.ts'
import { nameOpened, namesOpened, type ReadContext } from './read-context.ts'

/** Read model `api_keys`: one document per key; `key_hash` is how bearer keys are looked up; `name` sealed (opened by the queries). */
export interface ApiKeyDoc extends CredentialDoc {
  environment: 'live' | 'test'
  key_hash: string
  key_prefix: string
  enabled_checks: string[]
  rate_limit_per_minute: number
  updated_at: string
}

/** By hash (every request with a key: one index lookup) and an account's keys newest first. */
export const API_KEYS = credentialCollection('api_keys')

function evolve(doc: Folded<ApiKeyDoc> | null, event: RecordedEvent): ApiKeyDoc | null {
  const e = event as unknown as ApiKeyCreated | ApiKeyRevoked | ApiKeyUpdated
  if (e.type === 'ApiKeyCreated') {
    const { key_uuid: uuid, ...rest } = e.data
    return { _id: uuid, uuid, ...rest, updated_at: rest.created_at, revoked_at: null }
  }
  if (e.type === 'ApiKeyUpdated') {
    if (!doc) return null
    return {
      ...doc,
      ...(e.data.name !== undefined && { name: e.data.name }),
      ...(e.data.enabled_checks !== undefined && { enabled_checks: e.data.enabled_checks }),
      updated_at: e.data.updated_at
    }
  }
  return revoked(doc, e.data.revoked_at)
}

export const apiKeysProjection = foldProjection<ApiKeyDoc>({
  // ApiKeyUpdated joined in version 2: none existed before it (documents without `updated_at` read it as `created_at`).
  version: 2,
  collection: API_KEYS,
  event_types: ['ApiKeyCreated', 'ApiKeyRevoked', 'ApiKeyUpdated'],
  erase: true,
  key: 'key_uuid',
  evolve
})

/** A key by uuid (primary key), its name opened, or null. */
export async function getApiKey(rc: ReadContext, uuid: string): Promise<ApiKeyDoc | null> {
  return await nameOpened(rc, await rc.reads.collection<Folded<ApiKeyDoc>>(API_KEYS).get(uuid))
}

/** The key whose SHA-256 is `hash` (index `key_hash`), its name still sealed (authentication needs none). */
export async function apiKeyByHash(rc: Pick<ReadContext, 'reads'>, hash: string): Promise<ApiKeyDoc | null> {
  return await rc.reads.collection<Folded<ApiKeyDoc>>(API_KEYS).findOne({ key_hash: hash })
}

/** An account's keys, newest first, names opened (bounded: keys ever created by the account, a few dozen). */
export async function apiKeysOf(rc: ReadContext, owner: string): Promise<ApiKeyDoc[]> {
  return await namesOpened(rc, await rc.reads.collection<Folded<ApiKeyDoc>>(API_KEYS).find({ where: { user_uuid: owner }, sort: [['created_at', -1]] }))
}
