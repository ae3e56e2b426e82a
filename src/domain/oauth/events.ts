import type { Event } from '../shared.ts'

/** A public client registered itself (RFC 7591 dynamic client registration; no secret: `token_endpoint_auth_method` none). */
export type OAuthClientRegistered = Event<
  'OAuthClientRegistered',
  {
    client_id: string
    client_name: string
    /** Exact redirect URIs (RFC 6749 §3.1.2: compared as strings). */
    redirect_uris: string[]
    /** Scopes the client may ask for (its registration's `scope`), all grantable ones when it gave none. */
    scopes: string[]
    registered_at: string
  }
>

/**
 * The account approved a client's request on the consent page: a single-use code bound to
 * the client, the redirect URI and the PKCE challenge (RFC 7636 §4.4, S256), for the scopes
 * consented to. Only the code's SHA-256 names its stream.
 */
export type AuthorizationCodeIssued = Event<
  'AuthorizationCodeIssued',
  {
    client_id: string
    user_uuid: string
    redirect_uri: string
    scopes: string[]
    code_challenge: string
    expires_at: string
    issued_at: string
  }
>

/** The code was exchanged for a grant: the session (`session-<uuid>`, method `oauth`) it started. */
type AuthorizationCodeRedeemed = Event<'AuthorizationCodeRedeemed', { user_uuid: string; session_uuid: string; redeemed_at: string }>

/** The code was presented again after it was redeemed (RFC 6749 §4.1.2): what it issued is revoked. */
type AuthorizationCodeReplayed = Event<'AuthorizationCodeReplayed', { user_uuid: string; session_uuid: string; replayed_at: string }>

export type OAuthClientEvent = OAuthClientRegistered
export type AuthorizationCodeEvent = AuthorizationCodeIssued | AuthorizationCodeRedeemed | AuthorizationCodeReplayed
