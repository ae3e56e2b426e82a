import type { CommandContext } from '../context.ts'
import { OAuthError, LOOPBACK } from '../../domain/oauth/oauth-error.ts'
import { oauthClients } from './aggregate.ts'

/**
 * Scopes an OAuth client may be granted: verification and reading (no key or webhook
 * management), within the account's plan (`allowed_scopes`) when its tokens are used.
 */
export const OAUTH_SCOPES = ['email:verify:single', 'email:verify:bulk', 'results:read', 'usage:read', 'billing:read'] as const

/**
 * A native app's private-use scheme (RFC 8252 §7.1): a reverse domain name of at least two
 * labels (`com.example.app`). Schemes a browser treats itself (`javascript:`, `data:`,
 * `view-source:`, `chrome:`, `intent:`, `file:` …) are single words and never match.
 */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+:$/

/**
 * A redirect URI a public client may register (RFC 6749 §3.1.2, RFC 8252 §7, OAuth 2.1
 * §2.3.1): absolute, no fragment, at most 2,000 characters; `https` with a plain host name
 * or IP literal; `http` only on a loopback IP literal (`localhost` is not accepted, RFC
 * 8252 §8.3); or a private-use scheme of a native app, a reverse domain name (RFC 8252
 * §7.1, e.g. `com.example.app:/cb`), PKCE protecting its codes.
 */
export function acceptableRedirectUri(uri: string): boolean {
  if (uri.length > 2_000 || uri.includes('#')) return false
  let u: URL
  try {
    u = new URL(uri)
  } catch {
    return false
  }
  if (u.protocol === 'https:') return /^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(u.hostname) && u.username === '' && u.password === ''
  if (u.protocol === 'http:') return LOOPBACK.has(u.hostname)
  return PRIVATE_USE_SCHEME.test(u.protocol)
}

/**
 * POST /oauth/register (RFC 7591): a public client (no secret), its redirect URIs checked
 * (`acceptableRedirectUri`), grant types within `authorization_code` and `refresh_token`,
 * response types within `code`, `token_endpoint_auth_method` `none`, `scope` within
 * OAUTH_SCOPES (all of them when absent).
 * @throws OAuthError `invalid_redirect_uri`, `invalid_client_metadata` (400).
 */
export async function registerClient(
  ctx: CommandContext,
  metadata: {
    redirect_uris: string[]
    client_name?: string
    grant_types?: string[]
    response_types?: string[]
    token_endpoint_auth_method?: string
    scope?: string
  }
): Promise<{ client_id: string; client_name: string; redirect_uris: string[]; scopes: string[]; registered_at: string; position: number }> {
  if (metadata.redirect_uris.length === 0 || metadata.redirect_uris.length > 10 || !metadata.redirect_uris.every(acceptableRedirectUri)) {
    throw new OAuthError(
      'invalid_redirect_uri',
      "redirect_uris: 1 to 10 absolute URIs without a fragment: https, http on 127.0.0.1 or [::1], or a native app's private-use scheme named as a reverse domain name (com.example.app:/callback)"
    )
  }
  if (metadata.token_endpoint_auth_method !== undefined && metadata.token_endpoint_auth_method !== 'none')
    throw new OAuthError('invalid_client_metadata', 'only public clients: token_endpoint_auth_method none')
  if (!(metadata.grant_types ?? []).every(g => g === 'authorization_code' || g === 'refresh_token'))
    throw new OAuthError('invalid_client_metadata', 'grant_types: authorization_code and refresh_token only')
  if (!(metadata.response_types ?? []).every(r => r === 'code')) throw new OAuthError('invalid_client_metadata', 'response_types: code only')
  const asked = metadata.scope === undefined ? [...OAUTH_SCOPES] : metadata.scope.split(' ').filter(s => s !== '')
  if (asked.length === 0 || !asked.every(s => (OAUTH_SCOPES as readonly string[]).includes(s)))
    throw new OAuthError('invalid_client_metadata', `scope: within ${OAUTH_SCOPES.join(' ')}`)
  const data = {
    client_id: ctx.newId(),
    client_name: (metadata.client_name ?? '').trim().slice(0, 100) || 'An application',
    redirect_uris: [...new Set(metadata.redirect_uris)],
    scopes: [...new Set(asked)],
    registered_at: ctx.now().toISOString()
  }
  const r = await oauthClients.handle(ctx, data.client_id, { type: 'RegisterClient', data }, { actor: null })
  return { ...data, position: r.position }
}
