import type { Projection } from './projection.ts'
import { alreadyApplied } from './projection.ts'
import type { ApiKeyCreated, ApiKeyRevoked } from '../domain/apikey/events.ts'

/** Read model `api_keys`: one document per key; `key_hash` is how bearer keys are looked up. */
export interface ApiKeyDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  name: string
  environment: 'live' | 'test'
  key_hash: string
  key_prefix: string
  scopes: string[]
  enabled_checks: string[]
  rate_limit_per_minute: number
  created_at: string
  revoked_at: string | null
  revision: number
}

export const apiKeysProjection: Projection = {
  name: 'api_keys',
  event_types: ['ApiKeyCreated', 'ApiKeyRevoked'],
  async apply (event, { store }) {
    const keys = store.collection<ApiKeyDoc>('api_keys')
    const e = event as unknown as ApiKeyCreated | ApiKeyRevoked
    const doc = await keys.get(e.data.key_uuid)
    if (alreadyApplied(doc, event)) return
    if (e.type === 'ApiKeyRevoked') {
      if (doc) await keys.put({ ...doc, revoked_at: e.data.revoked_at, revision: event.revision })
      return
    }
    const { key_uuid: uuid, ...rest } = e.data
    await keys.put({ _id: uuid, uuid, ...rest, revoked_at: null, revision: event.revision })
  }
}
