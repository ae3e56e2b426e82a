import type { CollectionSpec } from '../ports/read-store.ts'
import { collection } from '../eventsourcing/projection.ts'

// What the documents of an account's credentials (API keys, agents) share: a sealed name,
// scopes, a revocation that happens once, and a collection found by the SHA-256 of the
// secret (each names its own field). The events and the secrets' formats are each aggregate's own.

/** A credential document: `name` sealed (opened by the queries); `revoked_at` null while it works. */
export interface CredentialDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  name: string
  scopes: string[]
  created_at: string
  revoked_at: string | null
}

/** Each credential collection's field for the SHA-256 of its secret. */
const HASH_FIELDS = { api_keys: 'key_hash', agents: 'token_hash' } as const

/**
 * The collection `name` of projection `name`: by its hash field (the SHA-256 of the secret, one
 * index lookup on every request that presents it) and an account's credentials newest first.
 */
export function credentialCollection(name: keyof typeof HASH_FIELDS): CollectionSpec {
  const hash = HASH_FIELDS[name]
  return collection({
    name,
    projection: name,
    fields: { user_uuid: 'text', [hash]: 'text', created_at: 'text' },
    indexes: [[hash], ['user_uuid', 'created_at']]
  })
}

/** `doc` revoked at `at`; a credential already revoked (or unknown) stays as it is: the first revocation's time is kept. */
export function revoked<T extends CredentialDoc>(doc: T | null, at: string): T | null {
  return doc && doc.revoked_at === null ? { ...doc, revoked_at: at } : doc
}
