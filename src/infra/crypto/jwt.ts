import { randomUUID } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import type { Secrets } from './secrets.ts'

export const ACCESS_AUDIENCE = 'email-verification-api'

export interface AccessClaims { user_uuid: string, session_uuid: string }

/**
 * Issues an EdDSA (Ed25519) access token: `sub` user uuid, `sid` session uuid, `typ`
 * "access", issuer and audience set, lifetime `ttl_s` seconds.
 */
export async function issueAccessToken (secrets: Secrets, issuer: string, claims: AccessClaims, ttlS: number, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return await new SignJWT({ sid: claims.session_uuid, typ: 'access' })
    .setProtectedHeader({ alg: 'EdDSA', kid: secrets.jwt.kid, typ: 'at+jwt' })
    .setSubject(claims.user_uuid)
    .setIssuer(issuer)
    .setAudience(ACCESS_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlS)
    .sign(secrets.jwt.private_key)
}

/** Verifies signature, issuer, audience, expiry and type; null when any fails. */
export async function verifyAccessToken (secrets: Secrets, issuer: string, token: string): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, secrets.jwt.public_key, { issuer, audience: ACCESS_AUDIENCE, algorithms: ['EdDSA'], typ: 'at+jwt' })
    if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return null
    return { user_uuid: payload.sub, session_uuid: payload.sid }
  } catch {
    return null
  }
}

/** A short-lived token for the second sign-in step (`typ` "2fa"), bound to the user. */
export async function issueChallengeToken (secrets: Secrets, issuer: string, userUuid: string, ttlS: number, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return await new SignJWT({ typ: '2fa' })
    .setProtectedHeader({ alg: 'EdDSA', kid: secrets.jwt.kid, typ: '2fa+jwt' })
    .setSubject(userUuid).setIssuer(issuer).setAudience(`${ACCESS_AUDIENCE}/2fa`).setJti(randomUUID())
    .setIssuedAt(iat).setExpirationTime(iat + ttlS)
    .sign(secrets.jwt.private_key)
}

/** The user and id (`jti`: the challenge is single use) of a valid challenge token, or null. */
export async function verifyChallengeToken (secrets: Secrets, issuer: string, token: string): Promise<{ user_uuid: string, challenge_id: string } | null> {
  try {
    const { payload } = await jwtVerify(token, secrets.jwt.public_key, { issuer, audience: `${ACCESS_AUDIENCE}/2fa`, algorithms: ['EdDSA'], typ: '2fa+jwt' })
    return payload.typ === '2fa' && typeof payload.sub === 'string' && typeof payload.jti === 'string' ? { user_uuid: payload.sub, challenge_id: payload.jti } : null
  } catch {
    return null
  }
}
