import { randomToken } from '../lib/crypto/hashing.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const SECRET = /^[A-Za-z0-9_-]{20,100}$/

/**
 * Tokens handed to a user (refresh cookie, reset and email-change links) read
 * `<owner uuid>.<secret>`: the uuid names the stream to load, only the SHA-256 of the
 * secret is stored. @returns null when malformed.
 */
export function parseOwnedToken(value: string): { owner: string; secret: string } | null {
  const dot = value.indexOf('.')
  if (dot < 0) return null
  const owner = value.slice(0, dot)
  const secret = value.slice(dot + 1)
  return UUID.test(owner) && SECRET.test(secret) ? { owner, secret } : null
}

/** A new token for `owner`: `{ token, secret }` (32 random bytes, base64url). */
export function newOwnedToken(owner: string): { token: string; secret: string } {
  const secret = randomToken(32)
  return { token: `${owner}.${secret}`, secret }
}
