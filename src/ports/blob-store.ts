import type { Readable } from 'node:stream'

/**
 * Where customers' files are kept (a list's original file): opaque bytes under an owner and an id, streamed in and out. The bytes
 * arrive sealed (the account's data key, `Sealer.sealStream`); the store neither knows nor
 * cares. Two adapters hold the same contract (test/support/blobstore-contract.ts): files in
 * `DATA_DIR/blobs` (the embedded default) and GridFS on MongoDB (the distributed topology).
 */
export interface BlobStore {
  /**
   * Stores `content` as the owner's blob `id`, replacing one of that id, as a whole or not
   * at all (a failed or aborted stream leaves nothing). Memory: a stream buffer.
   * @returns the bytes stored.
   * @throws Error for an id that is not `[A-Za-z0-9_-]{1,64}`, or what the stream or the store raised.
   */
  put: (owner: string, id: string, content: Readable) => Promise<{ bytes: number }>
  /** The blob's bytes, streamed; null when there is none. */
  open: (owner: string, id: string) => Promise<Readable | null>
  /** Removes the blob (nothing when there is none). */
  delete: (owner: string, id: string) => Promise<void>
  /** Removes every blob of the owner (an erased account). @returns how many. */
  deleteOwner: (owner: string) => Promise<number>
  close: () => Promise<void>
}

/** An owner or blob id a store accepts: a UUID or a word, nothing a path could be made of. */
const BLOB_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** @throws Error when `owner` or `id` is not a plain name. */
export function checkBlobName(owner: string, id: string): void {
  if (!BLOB_NAME.test(owner) || !BLOB_NAME.test(id)) throw new Error(`not a blob name: ${JSON.stringify(owner)}/${JSON.stringify(id)}`)
}
