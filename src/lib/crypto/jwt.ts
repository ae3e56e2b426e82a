import { randomUUID } from 'node:crypto'
import { SignJWT, decodeJwt, jwtVerify } from 'jose'
import { LRUCache } from 'lru-cache'
import type { Secrets } from './secrets.ts'

const ACCESS_AUDIENCE = 'email-verification-api'

/** Whose token, of which session; for an OAuth grant, its client and consented scopes. */
export interface AccessClaims {
  user_uuid: string
  session_uuid: string
  grant?: { client_id: string; scopes: string[] } | null
}

/**
 * Who issues access tokens: `session` for the service's own sign-ins (`JWT_ISSUER`), `oauth`
 * for an OAuth grant's tokens, the authorization server's issuer identifier (its base URL,
 * as its RFC 8414 metadata names it: RFC 9068 §2.2 asks the `iss` of a JWT access token to
 * be that identifier).
 */
export interface Issuers {
  session: string
  oauth: string
}

/**
 * Issues an EdDSA (Ed25519) access token: `sub` user uuid, `sid` session uuid, `typ`
 * "access", issuer and audience set, lifetime `ttl_s` seconds; an OAuth grant's token adds
 * `client_id` and `scope` (RFC 9068 §2.2: space-separated) and is issued by `issuers.oauth`.
 */
export async function issueAccessToken(secrets: Secrets, issuers: Issuers, claims: AccessClaims, ttlS: number, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return await new SignJWT({
    sid: claims.session_uuid,
    typ: 'access',
    ...(claims.grant && { client_id: claims.grant.client_id, scope: claims.grant.scopes.join(' ') })
  })
    .setProtectedHeader({ alg: 'EdDSA', kid: secrets.jwt.kid, typ: 'at+jwt' })
    .setSubject(claims.user_uuid)
    .setIssuer(claims.grant ? issuers.oauth : issuers.session)
    .setAudience(ACCESS_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlS)
    .sign(secrets.jwt.private_key)
}

/** Access tokens verified, per signing key: what each says, until it expires. */
const verified = new WeakMap<Secrets, LRUCache<string, { claims: AccessClaims; exp_ms: number }>>()
/** Verified access tokens kept per signing key (about 1 KiB each). */
const VERIFIED_MAX = 4_096

/**
 * Verifies signature, issuer (the grant's for an OAuth token, the session's otherwise),
 * audience, expiry and type; null when any fails. A token verified once is remembered until
 * its expiry (at most 4,096 tokens, least recently used dropped): its Ed25519 signature
 * check (about 0.2 ms through WebCrypto) is not paid again on every request (issue 42, item
 * 4: a flood of one session's requests). What the token says cannot change; whether its
 * session is still valid is the caller's check, on every request.
 */
export async function verifyAccessToken(secrets: Secrets, issuers: Issuers, token: string): Promise<AccessClaims | null> {
  let cache = verified.get(secrets)
  if (!cache) {
    cache = new LRUCache({ max: VERIFIED_MAX })
    verified.set(secrets, cache)
  }
  const key = `${issuers.session}\n${issuers.oauth}\n${token}`
  const known = cache.get(key)
  if (known) {
    if (known.exp_ms > Date.now()) return known.claims
    cache.delete(key)
  }
  const claims = await verifyAccessTokenNow(secrets, issuers, token)
  if (claims) cache.set(key, { claims, exp_ms: (decodeJwt(token).exp ?? 0) * 1000 })
  return claims
}

/** `verifyAccessToken` without its memory: the signature and every claim checked now. */
async function verifyAccessTokenNow(secrets: Secrets, issuers: Issuers, token: string): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, secrets.jwt.public_key, {
      issuer: [issuers.session, issuers.oauth],
      audience: ACCESS_AUDIENCE,
      algorithms: ['EdDSA'],
      typ: 'at+jwt'
    })
    if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return null
    if (payload.iss !== (typeof payload.client_id === 'string' ? issuers.oauth : issuers.session)) return null
    const grant =
      typeof payload.client_id === 'string'
        ? { client_id: payload.client_id, scopes: typeof payload.scope === 'string' && payload.scope !== '' ? payload.scope.split(' ') : [] }
        : null
    return { user_uuid: payload.sub, session_uuid: payload.sid, grant }
  } catch {
    return null
  }
}

/** A short-lived token for the second sign-in step (`typ` "2fa"), bound to the user. */
export async function issueChallengeToken(secrets: Secrets, issuer: string, userUuid: string, ttlS: number, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return await new SignJWT({ typ: '2fa' })
    .setProtectedHeader({ alg: 'EdDSA', kid: secrets.jwt.kid, typ: '2fa+jwt' })
    .setSubject(userUuid)
    .setIssuer(issuer)
    .setAudience(`${ACCESS_AUDIENCE}/2fa`)
    .setJti(randomUUID())
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlS)
    .sign(secrets.jwt.private_key)
}

/** The user and id (`jti`: the challenge is single use) of a valid challenge token, or null. */
export async function verifyChallengeToken(secrets: Secrets, issuer: string, token: string): Promise<{ user_uuid: string; challenge_id: string } | null> {
  try {
    const { payload } = await jwtVerify(token, secrets.jwt.public_key, { issuer, audience: `${ACCESS_AUDIENCE}/2fa`, algorithms: ['EdDSA'], typ: '2fa+jwt' })
    return payload.typ === '2fa' && typeof payload.sub === 'string' && typeof payload.jti === 'string'
      ? { user_uuid: payload.sub, challenge_id: payload.jti }
      : null
  } catch {
    return null
  }
}

/** An authorization request as the consent page carries it (signed: nothing in it can be changed by the browser). */
export interface AuthorizationRequest {
  client_id: string
  redirect_uri: string
  scopes: string[]
  state: string | null
  code_challenge: string
}

/** Signs an authorization request for the consent page (`typ` "authz-req", 10 minutes, a `jti` of its own). */
export async function issueAuthorizationRequest(secrets: Secrets, issuer: string, request: AuthorizationRequest, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return await new SignJWT({ typ: 'authz-req', req: request })
    .setProtectedHeader({ alg: 'EdDSA', kid: secrets.jwt.kid, typ: 'authz-req+jwt' })
    .setIssuer(issuer)
    .setAudience(`${ACCESS_AUDIENCE}/authorize`)
    .setJti(randomUUID())
    .setIssuedAt(iat)
    .setExpirationTime(iat + 600)
    .sign(secrets.jwt.private_key)
}

/** The request and id of a valid, unexpired signed authorization request, or null. */
export async function verifyAuthorizationRequest(
  secrets: Secrets,
  issuer: string,
  token: string
): Promise<{ request: AuthorizationRequest; id: string } | null> {
  try {
    const { payload } = await jwtVerify(token, secrets.jwt.public_key, {
      issuer,
      audience: `${ACCESS_AUDIENCE}/authorize`,
      algorithms: ['EdDSA'],
      typ: 'authz-req+jwt'
    })
    return payload.typ === 'authz-req' && typeof payload.jti === 'string' && typeof payload.req === 'object' && payload.req !== null
      ? { request: payload.req as AuthorizationRequest, id: payload.jti }
      : null
  } catch {
    return null
  }
}
