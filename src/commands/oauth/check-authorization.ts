import { issueAuthorizationRequest, type AuthorizationRequest } from '../../lib/crypto/jwt.ts'
import type { CommandContext } from '../context.ts'
import { getOAuthClient, type OAuthClientDoc } from '../../projections/oauth-clients.ts'
import { LOOPBACK } from '../../domain/oauth/oauth-error.ts'

/**
 * Whether a requested redirect URI is a registered one: the same string, or, for a
 * loopback `http` URI, the same but for the port (RFC 8252 §7.3: a native app listens on
 * the port it gets).
 */
function redirectMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true
  try {
    const a = new URL(registered)
    const b = new URL(requested)
    return (
      a.protocol === 'http:' &&
      b.protocol === 'http:' &&
      LOOPBACK.has(a.hostname) &&
      a.hostname === b.hostname &&
      a.pathname === b.pathname &&
      a.search === b.search &&
      b.hash === '' &&
      !requested.includes('#')
    )
  } catch {
    return false
  }
}

/**
 * A registered client (the `oauth_clients` read model), or null for an unknown or malformed
 * id. Reading the read model is safe: a client is registered by the operator before it is
 * used (the runner has long caught up), and a client revoked a moment ago can at most show
 * its consent page; the token endpoint decides on the client's stream.
 */
export async function clientById(ctx: CommandContext, clientId: string): Promise<OAuthClientDoc | null> {
  return /^[0-9a-f-]{36}$/.test(clientId) ? await getOAuthClient(ctx, clientId) : null
}

/** A refused authorization request: a 400 page, never a redirect (see `checkAuthorization`). */
export interface AuthorizationRefusal {
  to: 'page'
  description: string
}

/**
 * GET /oauth/authorize, checked as the interface's table says: 400 for an unknown
 * `client_id`, a `redirect_uri` not exactly registered, a `response_type` other than
 * `code`, or a missing or malformed PKCE parameter (`code_challenge` 43 base64url
 * characters, `code_challenge_method` `S256`), or no scope the client may be granted;
 * scopes it may not ask for are left out. Otherwise the request, signed, for the consent
 * page.
 */
export async function checkAuthorization(
  ctx: CommandContext,
  q: Record<string, string | undefined>
): Promise<{ ok: true; request: AuthorizationRequest; signed: string; client_name: string } | { ok: false; refusal: AuthorizationRefusal }> {
  const page = (description: string): { ok: false; refusal: AuthorizationRefusal } => ({ ok: false, refusal: { to: 'page', description } })
  const client = q.client_id ? await clientById(ctx, q.client_id) : null
  if (!client) return page('unknown client_id')
  if (!q.redirect_uri || !client.redirect_uris.some(r => redirectMatches(r, q.redirect_uri!))) return page('redirect_uri is not one the client registered')
  if (q.response_type !== 'code') return page('response_type must be code')
  if (!q.code_challenge || !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge))
    return page('code_challenge must be the base64url SHA-256 of a code_verifier (43 characters)')
  if (q.code_challenge_method !== 'S256') return page('code_challenge_method must be S256')
  const state = q.state ?? null
  // Scopes the client may not ask for are left out (RFC 6749 §3.3), never answered with a
  // redirect: anyone may register a client, and an error sent to its redirect URI without a
  // step by the user would make this service an open redirector (RFC 9700 §4.11.2).
  const asked = q.scope === undefined || q.scope.trim() === '' ? client.scopes : [...new Set(q.scope.split(' ').filter(s => s !== ''))]
  const scopes = asked.filter(s => client.scopes.includes(s))
  if (scopes.length === 0) return page(`scope: none of those asked for may be granted to this client (${client.scopes.join(' ')})`)
  const request: AuthorizationRequest = { client_id: client.client_id, redirect_uri: q.redirect_uri, scopes, state, code_challenge: q.code_challenge }
  return { ok: true, request, signed: await issueAuthorizationRequest(ctx.secrets, ctx.config.jwt_issuer, request, ctx.now()), client_name: client.client_name }
}
