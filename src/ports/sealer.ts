import type { Transform } from 'node:stream'

/** Text shown in place of personal data whose key was destroyed (erased account). */
export const ERASED = '[erased]'

/**
 * Seals personal data (e-mail addresses, names, codes, kept files) with the owning
 * account's data key, so that destroying the key erases it everywhere (crypto-shredding,
 * docs/design/architecture.md). The adapter is `LibsodiumSealer` (src/infra/crypto/sealer.ts):
 * AES-256-GCM for values, libsodium's secretstream for streams.
 */
export interface Sealer {
  /** `sealed:v1:…` text of the plaintext. @throws DataKeyDestroyedError when the owner's key was destroyed. */
  seal(owner: string, plaintext: string): Promise<string>
  /** The plaintext, or null when the key was destroyed (crypto-shredded). @throws on tampered text. */
  unseal(owner: string, sealed: string): Promise<string | null>
  /** A transform sealing a byte stream (a customer's file at rest). @throws DataKeyDestroyedError when the key was destroyed. */
  sealStream(owner: string): Promise<Transform>
  /** A transform opening a sealed stream, or null when the key was destroyed; errors the stream on tampering or truncation. */
  unsealStream(owner: string): Promise<Transform | null>
  /** Destroys the owner's data key: everything sealed with it becomes unreadable. */
  destroyKey(owner: string): Promise<void>
}
