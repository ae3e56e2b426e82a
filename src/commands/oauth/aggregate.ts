import * as oauth from '../../domain/oauth/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** A registered OAuth client (`oauth-client-<client id>`). */
export const oauthClients = aggregate('oauth-client', oauth.client)
/** An OAuth authorization code, by its SHA-256 (`oauth-code-<hash>`: the code itself is never stored). */
export const oauthCodes = aggregate('oauth-code', oauth.code)
