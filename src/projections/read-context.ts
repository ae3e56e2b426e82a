import type { CollectionSpec, Doc, ReadStore } from '../ports/read-store.ts'
import { ERASED, type Sealer } from '../ports/sealer.ts'

/**
 * The identity every account-owned read model document starts with: its id is the
 * aggregate's uuid (kept also as `uuid`, the field the API shows), and `user_uuid` its owner
 * (erasure deletes by it).
 */
export const owned = (uuid: string, user_uuid: string): { _id: string; uuid: string; user_uuid: string } => ({ _id: uuid, uuid, user_uuid })

/** What query functions need: the read store and the sealer (personal data stays sealed in read models). */
export interface ReadContext {
  reads: ReadStore
  sealer: Sealer
}

/**
 * A text of `owner` as a read model keeps it, opened: sealed text unsealed with the
 * account's data key (`[erased]` once it was destroyed); text written before it was sealed
 * (events are never rewritten) as is; null stays null.
 */
export async function openText(rc: Pick<ReadContext, 'sealer'>, owner: string, value: string | null): Promise<string | null> {
  if (value === null || !value.startsWith('sealed:')) return value
  return (await rc.sealer.unseal(owner, value)) ?? ERASED
}

/** A read model document that carries a customer's name for it (sealed with the owner's data key). */
type Named = { user_uuid: string; name: string | null }

/**
 * A document with its `name` (a customer's free text, sealed with the owner's data key)
 * opened: see `openText`; a null name, or no document, stays null.
 */
export async function nameOpened<T extends Named>(rc: Pick<ReadContext, 'sealer'>, doc: T): Promise<T>
export async function nameOpened<T extends Named>(rc: Pick<ReadContext, 'sealer'>, doc: T | null): Promise<T | null>
export async function nameOpened<T extends Named>(rc: Pick<ReadContext, 'sealer'>, doc: T | null): Promise<T | null> {
  return doc === null || doc.name === null ? doc : { ...doc, name: await openText(rc, doc.user_uuid, doc.name) }
}

/** Documents with their names opened (`nameOpened`), in order. */
export async function namesOpened<T extends Named>(rc: Pick<ReadContext, 'sealer'>, docs: readonly T[]): Promise<T[]> {
  return await Promise.all(docs.map(async d => await nameOpened(rc, d)))
}

/**
 * A page of an account's documents in `spec` (those that also match `among`, equalities:
 * one environment's, say), newest first, names opened, and how many it has. Cost: a range
 * of the index (user_uuid, …`among`'s fields, created_at) the collection declares, and a
 * count on it.
 */
export async function newestOwned<T extends Named & Doc>(
  rc: ReadContext,
  spec: CollectionSpec,
  owner: string,
  page: { limit: number; offset: number },
  among: Readonly<Record<string, string>> = {}
): Promise<{ items: T[]; total: number }> {
  const c = rc.reads.collection<T>(spec)
  const where = { ...among, user_uuid: owner }
  const [items, total] = await Promise.all([c.find({ where, sort: [['created_at', -1]], ...page }), c.count(where)])
  return { items: await namesOpened(rc, items), total }
}
