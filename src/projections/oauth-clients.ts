import type { RecordedEvent } from '../ports/event-store.ts'
import type { OAuthClientRegistered } from '../domain/oauth/events.ts'
import { collection, foldProjection, type Folded } from '../eventsourcing/projection.ts'
import type { ReadContext } from './read-context.ts'

/** Read model `oauth_clients`: registered OAuth clients (RFC 7591), public metadata only. */
export interface OAuthClientDoc {
  [k: string]: unknown
  _id: string
  client_id: string
  client_name: string
  redirect_uris: string[]
  scopes: string[]
  registered_at: string
}

/** By client id (primary key): the authorization request and the consent page look clients up. */
const OAUTH_CLIENTS = collection({ name: 'oauth_clients', projection: 'oauth_clients', fields: {}, indexes: [] })

function evolve(_doc: Folded<OAuthClientDoc> | null, event: RecordedEvent): OAuthClientDoc | null {
  const e = event as unknown as OAuthClientRegistered
  return {
    _id: e.data.client_id,
    client_id: e.data.client_id,
    client_name: e.data.client_name,
    redirect_uris: e.data.redirect_uris,
    scopes: e.data.scopes,
    registered_at: e.data.registered_at
  }
}

export const oauthClientsProjection = foldProjection<OAuthClientDoc>({
  version: 1,
  collection: OAUTH_CLIENTS,
  event_types: ['OAuthClientRegistered'],
  key: 'client_id',
  evolve
})

/** A registered client by id, or null. Cost: one primary-key lookup. */
export async function getOAuthClient(rc: Pick<ReadContext, 'reads'>, clientId: string): Promise<OAuthClientDoc | null> {
  return await rc.reads.collection<Folded<OAuthClientDoc>>(OAUTH_CLIENTS).get(clientId)
}
