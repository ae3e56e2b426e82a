/**
 * Per-account data keys for personal data in events (docs/design/architecture.md: crypto-shredding).
 * Each key is 32 random bytes, stored wrapped (AES-256-GCM) under the master key.
 * `destroy` deletes the key; everything sealed with it becomes unreadable.
 */
export interface DataKeyStore {
  /** The owner's key, created on first use. @throws when the key was destroyed. */
  getOrCreate(owner: string): Promise<Buffer>
  /** The owner's key, or null when it never existed or was destroyed. */
  get(owner: string): Promise<Buffer | null>
  destroy(owner: string): Promise<void>
  close(): Promise<void>
}

export class DataKeyDestroyedError extends Error {
  constructor(owner: string) {
    super(`data key of ${owner} was destroyed`)
    this.name = 'DataKeyDestroyedError'
  }
}
