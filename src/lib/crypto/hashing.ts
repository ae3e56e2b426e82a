import { createHash, createHmac, createSecretKey, randomBytes, randomInt, type KeyObject } from 'node:crypto'
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2'

/**
 * argon2id parameters: OWASP Password Storage Cheat Sheet (m=19 MiB, t=2, p=1).
 */
const ARGON2 = { algorithm: 2 /* Algorithm.Argon2id (a const enum, not importable under erasable syntax) */, memoryCost: 19_456, timeCost: 2, parallelism: 1 }

/** Hashes a password with argon2id; returns a PHC string. */
export async function hashPassword(password: string): Promise<string> {
  return await argon2Hash(password, ARGON2)
}

// A hash of a random password, verified when the account does not exist so that
// "no such account" costs the same time as "wrong password".
let dummyHash: Promise<string> | null = null

/**
 * Verifies a password against a PHC string; with `phc = null` runs a verification of
 * equal cost against a dummy hash and returns false (timing equalisation).
 */
export async function verifyPassword(phc: string | null, password: string): Promise<boolean> {
  if (phc === null) {
    dummyHash ??= hashPassword(randomBytes(16).toString('hex'))
    await argon2Verify(await dummyHash, password).catch(() => false)
    return false
  }
  try {
    return await argon2Verify(phc, password)
  } catch {
    return false
  }
}

/** SHA-256 hex of a high-entropy secret (API keys, refresh tokens). */
export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/** HMAC-SHA256 hex: blind index for e-mail addresses and hashes of low-entropy codes. */
export function hmacHex(key: Buffer, value: string): string {
  return createHmac('sha256', keyObjectOf(key)).update(value).digest('hex')
}

/** A six-digit numeric code, uniformly drawn ("000000"–"999999"). */
export function sixDigitCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0')
}

/** A URL-safe random token of `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

const keyObjects = new WeakMap<Buffer, KeyObject>()

/**
 * The secret key object of a key's bytes, made once per Buffer (held weakly): Node's
 * ciphers and HMACs take a KeyObject several times faster than raw bytes, which they
 * import anew on every call (measured: HMAC-SHA256 7×, AES-256-GCM 3× on Node 24).
 */
export function keyObjectOf(key: Buffer): KeyObject {
  let k = keyObjects.get(key)
  if (!k) {
    k = createSecretKey(key)
    keyObjects.set(key, k)
  }
  return k
}
