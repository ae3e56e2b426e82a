import { DomainError, isAtOrAfter } from '../shared.ts'
import type { AuthorizationCodeEvent, AuthorizationCodeIssued, OAuthClientEvent, OAuthClientRegistered } from './events.ts'

/**
 * OAuth 2.1 clients and authorization codes (RFC 6749, RFC 7636, RFC 7591). Two small aggregates: `oauth-client-<id>` and
 * `oauth-code-<SHA-256 of the code>`. A grant is a session (`session-<uuid>`, method
 * `oauth`): its refresh rotation, reuse detection and revocation are the session decider's.
 */

/** Lifetime of an authorization code (ms): short, single use (RFC 6749 §4.1.2 recommends at most 10 minutes). */
export const CODE_TTL_MS = 60_000

export type ClientState = { status: 'none' } | ({ status: 'registered' } & OAuthClientRegistered['data'])

export const client = {
  initialState: (): ClientState => ({ status: 'none' }),
  evolve(state: ClientState, event: OAuthClientEvent): ClientState {
    return event.type === 'OAuthClientRegistered' ? { status: 'registered', ...event.data } : state
  },
  /**
   * RegisterClient on a new stream → OAuthClientRegistered (the metadata was checked by
   * the command: redirect URIs, scopes).
   * @throws DomainError conflict `register_client.exists`.
   */
  decide(command: { type: 'RegisterClient'; data: OAuthClientRegistered['data'] }, state: ClientState): OAuthClientEvent[] {
    if (state.status !== 'none') throw new DomainError('conflict', 'register_client.exists', 'client already registered')
    return [{ type: 'OAuthClientRegistered', data: command.data }]
  }
}

export type CodeState =
  | { status: 'none' }
  | ({ status: 'issued' | 'redeemed' } & AuthorizationCodeIssued['data'] & { session_uuid: string | null; replayed: boolean })

export type CodeCommand =
  | { type: 'IssueCode'; data: AuthorizationCodeIssued['data'] }
  /**
   * The token request's facts: the client and redirect URI it names, whether its
   * `code_verifier` hashes (S256) to the code's challenge, and the session the exchange
   * would start.
   */
  | { type: 'ExchangeCode'; data: { client_id: string; redirect_uri: string; verifier_ok: boolean; session_uuid: string; now: string } }

const invalidGrant = (why: string): DomainError => new DomainError('invalid', 'token.invalid_grant', why)

export const code = {
  initialState: (): CodeState => ({ status: 'none' }),
  evolve(state: CodeState, event: AuthorizationCodeEvent): CodeState {
    switch (event.type) {
      case 'AuthorizationCodeIssued':
        return { status: 'issued', ...event.data, session_uuid: null, replayed: false }
      case 'AuthorizationCodeRedeemed':
        return state.status === 'none' ? state : { ...state, status: 'redeemed', session_uuid: event.data.session_uuid }
      case 'AuthorizationCodeReplayed':
        return state.status === 'none' ? state : { ...state, replayed: true }
      default:
        return state
    }
  },
  /**
   * - IssueCode on a new stream → AuthorizationCodeIssued.
   * - ExchangeCode of an issued code, before it expires, by its client, with its redirect URI
   *   and a verifier matching its challenge → AuthorizationCodeRedeemed (the grant starts).
   * - ExchangeCode of a redeemed code by its own client → AuthorizationCodeReplayed, once:
   *   the handler revokes the grant the first exchange started (and the first exchange,
   *   should it still be starting that grant, sees the replay and revokes it itself), and
   *   answers `invalid_grant` (RFC 6749 §4.1.2). By another client: `invalid_grant` only.
   * @throws DomainError invalid `token.invalid_grant` for an unknown or expired code, another
   *   client or redirect URI, or a wrong verifier (RFC 6749 §5.2; RFC 7636 §4.6).
   */
  decide(command: CodeCommand, state: CodeState): AuthorizationCodeEvent[] {
    if (command.type === 'IssueCode') {
      if (state.status !== 'none') throw new DomainError('conflict', 'authorize.code_exists', 'code already issued')
      return [{ type: 'AuthorizationCodeIssued', data: command.data }]
    }
    const d = command.data
    if (state.status === 'none') throw invalidGrant('unknown authorization code')
    if (state.status === 'redeemed') {
      if (d.client_id !== state.client_id) throw invalidGrant('the authorization code was issued to another client')
      return state.replayed
        ? []
        : [{ type: 'AuthorizationCodeReplayed', data: { user_uuid: state.user_uuid, session_uuid: state.session_uuid!, replayed_at: d.now } }]
    }
    if (isAtOrAfter(d.now, state.expires_at)) throw invalidGrant('the authorization code has expired')
    if (d.client_id !== state.client_id) throw invalidGrant('the authorization code was issued to another client')
    if (d.redirect_uri !== state.redirect_uri) throw invalidGrant("redirect_uri differs from the authorization request's")
    if (!d.verifier_ok) throw invalidGrant('code_verifier does not match the code_challenge (PKCE S256)')
    return [{ type: 'AuthorizationCodeRedeemed', data: { user_uuid: state.user_uuid, session_uuid: d.session_uuid, redeemed_at: d.now } }]
  }
}
