import { createHash } from 'node:crypto'
import { DomainError } from '../domain/shared.ts'
import * as oauth from '../domain/oauth/decider.ts'
import * as session from '../domain/session/decider.ts'
import * as user from '../domain/user/decider.ts'
import { randomToken, sha256Hex } from '../lib/crypto/hashing.ts'
import { issueAuthorizationRequest, verifyAccessToken, type AuthorizationRequest } from '../lib/crypto/jwt.ts'
import { issuersOf, type CommandContext } from './context.ts'
import { handle, load } from './command-handler.ts'
import { parseRefreshToken, refreshSession, revokeSession } from './refresh-session.ts'
import { startSession, type SignedIn } from './start-session.ts'
import { getOAuthClient, type OAuthClientDoc } from '../projections/oauth-clients.ts'

/**
 * Scopes an OAuth client may be granted: verification and reading (no key or webhook
 * management), within the account's plan (`allowed_scopes`) when its tokens are used.
 */
export const OAUTH_SCOPES = ['email:verify:single', 'email:verify:bulk', 'results:read', 'usage:read', 'billing:read'] as const

/** An OAuth error as RFC 6749 §5.2 / RFC 7591 §3.2.2 name it, with its HTTP status. */
export class OAuthError extends Error {
  readonly error: string
  readonly status: number
  constructor (error: string, description: string, status = 400) {
    super(description)
    this.error = error
    this.status = status
  }
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]'])
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
export function acceptableRedirectUri (uri: string): boolean {
  if (uri.length > 2_000 || uri.includes('#')) return false
  let u: URL
  try { u = new URL(uri) } catch { return false }
  if (u.protocol === 'https:') return /^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(u.hostname) && u.username === '' && u.password === ''
  if (u.protocol === 'http:') return LOOPBACK.has(u.hostname)
  return PRIVATE_USE_SCHEME.test(u.protocol)
}

/**
 * Whether a requested redirect URI is a registered one: the same string, or, for a
 * loopback `http` URI, the same but for the port (RFC 8252 §7.3: a native app listens on
 * the port it gets).
 */
export function redirectMatches (registered: string, requested: string): boolean {
  if (registered === requested) return true
  try {
    const a = new URL(registered)
    const b = new URL(requested)
    return a.protocol === 'http:' && b.protocol === 'http:' && LOOPBACK.has(a.hostname) && a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search && b.hash === '' && !requested.includes('#')
  } catch {
    return false
  }
}

/**
 * POST /oauth/register (RFC 7591): a public client (no secret), its redirect URIs checked
 * (`acceptableRedirectUri`), grant types within `authorization_code` and `refresh_token`,
 * response types within `code`, `token_endpoint_auth_method` `none`, `scope` within
 * OAUTH_SCOPES (all of them when absent).
 * @throws OAuthError `invalid_redirect_uri`, `invalid_client_metadata` (400).
 */
export async function registerClient (ctx: CommandContext, metadata: { redirect_uris: string[], client_name?: string, grant_types?: string[], response_types?: string[], token_endpoint_auth_method?: string, scope?: string }): Promise<{ client_id: string, client_name: string, redirect_uris: string[], scopes: string[], registered_at: string, position: number }> {
  if (metadata.redirect_uris.length === 0 || metadata.redirect_uris.length > 10 || !metadata.redirect_uris.every(acceptableRedirectUri)) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris: 1 to 10 absolute URIs without a fragment: https, http on 127.0.0.1 or [::1], or a native app\'s private-use scheme named as a reverse domain name (com.example.app:/callback)')
  }
  if (metadata.token_endpoint_auth_method !== undefined && metadata.token_endpoint_auth_method !== 'none') throw new OAuthError('invalid_client_metadata', 'only public clients: token_endpoint_auth_method none')
  if (!(metadata.grant_types ?? []).every(g => g === 'authorization_code' || g === 'refresh_token')) throw new OAuthError('invalid_client_metadata', 'grant_types: authorization_code and refresh_token only')
  if (!(metadata.response_types ?? []).every(r => r === 'code')) throw new OAuthError('invalid_client_metadata', 'response_types: code only')
  const asked = metadata.scope === undefined ? [...OAUTH_SCOPES] : metadata.scope.split(' ').filter(s => s !== '')
  if (asked.length === 0 || !asked.every(s => (OAUTH_SCOPES as readonly string[]).includes(s))) throw new OAuthError('invalid_client_metadata', `scope: within ${OAUTH_SCOPES.join(' ')}`)
  const data = { client_id: ctx.newId(), client_name: (metadata.client_name ?? '').trim().slice(0, 100) || 'An application', redirect_uris: [...new Set(metadata.redirect_uris)], scopes: [...new Set(asked)], registered_at: ctx.now().toISOString() }
  const r = await handle(ctx, `oauth-client-${data.client_id}`, oauth.client, { type: 'RegisterClient', data }, { actor: null })
  return { ...data, position: r.position }
}

/** A registered client (the `oauth_clients` read model), or null for an unknown or malformed id. */
export async function clientById (ctx: CommandContext, clientId: string): Promise<OAuthClientDoc | null> {
  return /^[0-9a-f-]{36}$/.test(clientId) ? await getOAuthClient(ctx, clientId) : null
}

/** A refused authorization request: a 400 page, never a redirect (see `checkAuthorization`). */
export interface AuthorizationRefusal { to: 'page', description: string }

/**
 * GET /oauth/authorize, checked as the interface's table says: 400 for an unknown
 * `client_id`, a `redirect_uri` not exactly registered, a `response_type` other than
 * `code`, or a missing or malformed PKCE parameter (`code_challenge` 43 base64url
 * characters, `code_challenge_method` `S256`), or no scope the client may be granted;
 * scopes it may not ask for are left out. Otherwise the request, signed, for the consent
 * page.
 */
export async function checkAuthorization (ctx: CommandContext, q: Record<string, string | undefined>): Promise<{ ok: true, request: AuthorizationRequest, signed: string, client_name: string } | { ok: false, refusal: AuthorizationRefusal }> {
  const page = (description: string): { ok: false, refusal: AuthorizationRefusal } => ({ ok: false, refusal: { to: 'page', description } })
  const client = q.client_id ? await clientById(ctx, q.client_id) : null
  if (!client) return page('unknown client_id')
  if (!q.redirect_uri || !client.redirect_uris.some(r => redirectMatches(r, q.redirect_uri!))) return page('redirect_uri is not one the client registered')
  if (q.response_type !== 'code') return page('response_type must be code')
  if (!q.code_challenge || !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge)) return page('code_challenge must be the base64url SHA-256 of a code_verifier (43 characters)')
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

/**
 * The account approved `request` on the consent page: a single-use code (256 bits; only
 * its SHA-256 names its stream) valid CODE_TTL_MS.
 * @returns the code for the redirect.
 */
export async function issueCode (ctx: CommandContext, userUuid: string, request: AuthorizationRequest): Promise<string> {
  const code = randomToken(32)
  const now = ctx.now()
  await handle(ctx, `oauth-code-${sha256Hex(code)}`, oauth.code, {
    type: 'IssueCode',
    data: { client_id: request.client_id, user_uuid: userUuid, redirect_uri: request.redirect_uri, scopes: request.scopes, code_challenge: request.code_challenge, expires_at: new Date(now.getTime() + oauth.CODE_TTL_MS).toISOString(), issued_at: now.toISOString() }
  }, { actor: userUuid })
  return code
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/**
 * POST /oauth/token `authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5): the code, for
 * its client and redirect URI, with a verifier whose S256 is the code's challenge, starts a
 * grant (a session, method `oauth`, bound to the client and the consented scopes). A code
 * exchanged a second time is refused and the grant its first exchange started is revoked.
 * @throws OAuthError `invalid_request`, `invalid_grant` (400).
 */
export async function exchangeCode (ctx: CommandContext, input: { code?: string, client_id?: string, redirect_uri?: string, code_verifier?: string }): Promise<SignedIn & { scopes: string[] }> {
  if (!input.code || !input.client_id || !input.redirect_uri || !input.code_verifier) throw new OAuthError('invalid_request', 'code, client_id, redirect_uri and code_verifier are required')
  if (!VERIFIER.test(input.code_verifier)) throw new OAuthError('invalid_request', 'code_verifier: 43 to 128 unreserved characters (RFC 7636 §4.1)')
  const stream = `oauth-code-${sha256Hex(input.code)}`
  const { state } = await load(ctx, stream, oauth.code)
  const challenge = createHash('sha256').update(input.code_verifier).digest('base64url')
  const sessionUuid = ctx.newId()
  let r
  try {
    r = await handle(ctx, stream, oauth.code, { type: 'RedeemCode', data: { client_id: input.client_id, redirect_uri: input.redirect_uri, verifier_ok: state.status !== 'none' && challenge === state.code_challenge, session_uuid: sessionUuid, now: ctx.now().toISOString() } }, { actor: null })
  } catch (err) {
    if (err instanceof DomainError && err.code === 'token.invalid_grant') throw new OAuthError('invalid_grant', err.message)
    throw err
  }
  const redeemed = r.events.some(e => e.type === 'AuthorizationCodeRedeemed')
  if (!redeemed) {
    // A code used again: the grant its first exchange started ends (if it has started yet:
    // otherwise that exchange sees the replay below and ends it itself).
    const replay = r.events.find(e => e.type === 'AuthorizationCodeReplayed')
    if (replay) await revokeSession(ctx, replay.data.session_uuid, 'revoked').catch(err => { if (!(err instanceof DomainError)) throw err })
    throw new OAuthError('invalid_grant', 'the authorization code was used already; what it issued is revoked')
  }
  const issued = r.state as Exclude<oauth.CodeState, { status: 'none' }>
  const { state: account } = await load(ctx, `user-${issued.user_uuid}`, user)
  if (!user.isActive(account)) throw new OAuthError('invalid_grant', 'the account is not active')
  const signedIn = await startSession(ctx, issued.user_uuid, 'oauth', { oauth: { session_uuid: sessionUuid, grant: { client_id: issued.client_id, scopes: issued.scopes } } })
  // Two exchanges at once: the second's replay may have landed before this grant existed.
  const after = (await load(ctx, stream, oauth.code)).state
  if (after.status !== 'none' && after.replayed) {
    await revokeSession(ctx, sessionUuid, 'revoked')
    throw new OAuthError('invalid_grant', 'the authorization code was used twice at once; what it issued is revoked')
  }
  return { ...signedIn, scopes: issued.scopes }
}

/**
 * POST /oauth/token `refresh_token` (RFC 6749 §6): the grant's refresh token, rotated (a
 * spent one presented again revokes the grant: the session decider's reuse detection), for
 * the client it was issued to.
 * @throws OAuthError `invalid_request`, `invalid_grant` (400).
 */
export async function refreshGrant (ctx: CommandContext, input: { refresh_token?: string, client_id?: string }): Promise<SignedIn> {
  if (!input.refresh_token || !input.client_id) throw new OAuthError('invalid_request', 'refresh_token and client_id are required')
  try {
    return await refreshSession(ctx, input.refresh_token, input.client_id)
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'unauthorized') throw new OAuthError('invalid_grant', err.message)
    throw err
  }
}

/**
 * POST /oauth/revoke (RFC 7009): a refresh or access token of a grant of `client_id` ends
 * the grant (its other tokens too). An unknown, invalid or another client's token changes
 * nothing, and the answer is the same (§2.2).
 * @returns the global position of the revocation (0 when nothing changed).
 */
export async function revokeToken (ctx: CommandContext, input: { token?: string, client_id?: string }): Promise<number> {
  if (!input.token || !input.client_id) throw new OAuthError('invalid_request', 'token and client_id are required')
  const access = await verifyAccessToken(ctx.secrets, issuersOf(ctx), input.token)
  const sessionUuid = access ? access.session_uuid : parseRefreshToken(input.token)?.session_uuid
  if (!sessionUuid || (access && access.grant?.client_id !== input.client_id)) return 0
  const { state } = await load(ctx, `session-${sessionUuid}`, session)
  if (state.status !== 'active' || state.grant?.client_id !== input.client_id) return 0
  // A refresh token revokes only when it is the grant's current or a recent one (its secret, not its id alone).
  if (!access && !refreshTokenOf(state, input.token)) return 0
  return await revokeSession(ctx, sessionUuid, 'revoked', undefined, undefined, `oauth-client:${input.client_id}`)
}

function refreshTokenOf (state: { refresh_hash: string, spent: string[] }, token: string): boolean {
  const secret = parseRefreshToken(token)?.secret
  if (!secret) return false
  const h = sha256Hex(secret)
  return h === state.refresh_hash || state.spent.includes(h)
}
