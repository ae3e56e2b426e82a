import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { keyObjectOf } from './hashing.ts'
import type { DataKeyStore } from './keystore.ts'

const PREFIX = 'sealed:v1:'

/** Text shown in place of personal data whose key was destroyed (erased account). */
export const ERASED = '[erased]'

/**
 * Seals personal data (e-mail addresses, codes) for events with the owning account's
 * data key: AES-256-GCM, owner uuid as additional data. Sealed text looks like
 * `sealed:v1:<base64url(iv | ciphertext | tag)>`.
 */
export class Sealer {
  private readonly keys: DataKeyStore
  constructor (keys: DataKeyStore) { this.keys = keys }

  /** @throws DataKeyDestroyedError when the owner's key was destroyed. */
  async seal (owner: string, plaintext: string): Promise<string> {
    const key = await this.keys.getOrCreate(owner)
    const iv = randomBytes(12)
    const c = createCipheriv('aes-256-gcm', keyObjectOf(key), iv)
    c.setAAD(Buffer.from(owner))
    const body = Buffer.concat([iv, c.update(plaintext, 'utf8'), c.final(), c.getAuthTag()])
    return PREFIX + body.toString('base64url')
  }

  /** Destroys the owner's data key: everything sealed with it becomes unreadable. */
  async destroyKey (owner: string): Promise<void> { await this.keys.destroy(owner) }

  /** The plaintext, or null when the key was destroyed (crypto-shredded). @throws on tampered text. */
  async unseal (owner: string, sealed: string): Promise<string | null> {
    if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed value')
    const key = await this.keys.get(owner)
    if (!key) return null
    const body = Buffer.from(sealed.slice(PREFIX.length), 'base64url')
    const d = createDecipheriv('aes-256-gcm', keyObjectOf(key), body.subarray(0, 12))
    d.setAAD(Buffer.from(owner))
    d.setAuthTag(body.subarray(body.length - 16))
    return Buffer.concat([d.update(body.subarray(12, body.length - 16)), d.final()]).toString('utf8')
  }
}
