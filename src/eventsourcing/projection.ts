import type { RecordedEvent } from '../ports/event-store.ts'
import type { CollectionSpec, Doc } from '../ports/read-store.ts'

/**
 * What a projection writes through while the runner applies a batch: reads see the
 * batch's own writes first (a document touched by several events of a batch is read
 * once and written once), and everything is written with the projections' checkpoints
 * in one atomic write at the end of the batch. Documents it hands out are frozen (shared
 * with later events of the batch): a projection builds a new document rather than change one.
 */
export interface ProjectionWriter {
  /** A document the batch already holds (or knows absent) comes at once; one read from the store, as a promise. */
  get<T extends Doc>(spec: CollectionSpec, id: string): T | null | Promise<T | null>
  put(spec: CollectionSpec, doc: Doc): void
  delete(spec: CollectionSpec, id: string): void
  /** Deletes every document whose `field` (declared in the spec) equals `value` (erasure). */
  deleteWhere(spec: CollectionSpec, field: string, value: string): void
}

/**
 * A projection (docs/design/architecture.md "Read side"): turns events of `event_types` into
 * documents of its `collections`. The runner applies each event to it once (its checkpoint
 * commits with its documents). `version` is bumped when the documents it makes change
 * meaning: a projection whose collections or version changed is rebuilt in a new
 * generation at start.
 */
export interface Projection {
  name: string
  version: number
  collections: readonly CollectionSpec[]
  event_types: readonly string[]
  /** Done at once when the writer holds every document the event needs; a promise when one is read from the store. */
  apply(event: RecordedEvent, writer: ProjectionWriter): void | Promise<void>
}

/** `fn(v)` at once when `v` is at hand, once it settles when it is a promise (a batch's cached reads need no turn of the event loop). */
function andThen<T, R>(v: T | Promise<T>, fn: (v: T) => R | Promise<R>): R | Promise<R> {
  return v instanceof Promise ? v.then(fn) : fn(v)
}

/** A document of a single-stream read model: it keeps the revision of the last event applied. */
export type Folded<T> = T & { _id: string; revision: number }

/**
 * A projection of one document per key, as a pure fold (Emmett's model): the event's
 * `data[key]` names the document it touches, `evolve(doc | null, event)` returns the new
 * document (or null to delete it); the projection is named by its collection's
 * `projection`. The runner does the get, the guard (an event at or below the document's
 * `revision` is not applied again) and the put. With `erase`, UserDeleted deletes every
 * document of the account (the collection declares `user_uuid`).
 */
export function foldProjection<T extends Doc>(p: {
  version: number
  collection: CollectionSpec
  event_types: readonly string[]
  key: string
  evolve: (doc: Folded<T> | null, event: RecordedEvent) => T | null
  erase?: boolean
}): Projection {
  return {
    name: p.collection.projection,
    version: p.version,
    collections: [p.collection],
    event_types: p.erase ? [...p.event_types, 'UserDeleted'] : p.event_types,
    apply(event, writer) {
      if (p.erase && event.type === 'UserDeleted') {
        writer.deleteWhere(p.collection, 'user_uuid', event.data.user_uuid as string)
        return
      }
      const id = event.data[p.key] as string
      return andThen(writer.get<Folded<T>>(p.collection, id), doc => {
        if (doc !== null && doc.revision >= event.revision) return
        const next = p.evolve(doc, event)
        if (next === null) {
          if (doc !== null) writer.delete(p.collection, id)
          return
        }
        writer.put(p.collection, { ...next, _id: id, revision: event.revision })
      })
    }
  }
}

/** A document a fold reads: its collection and id. */
export type DocumentKey = readonly [CollectionSpec, string]

/** A write a fold returns, done by the runner: a document put, deleted by id, or deleted by a field (erasure). */
export type Write = { put: CollectionSpec; doc: Doc } | { delete: CollectionSpec; id: string } | { deleteWhere: CollectionSpec; field: string; value: string }

/**
 * A projection as a pure fold over a small set of documents (Emmett's model, for read
 * models an event changes in several places: a balance and its ledger, a slot, its hour and
 * its day): `reads(event)` names the documents the event's fold needs (a few, by collection
 * and id; `readsAfter` names more from what those held), `evolve(docs, event)` returns the
 * writes (pure: it sees only those documents, null where one does not exist, and the
 * event). The runner does the gets and the writes, in the batch's one atomic commit. The
 * projection is named by its collections' `projection` (one name: a collection of another
 * projection is a programming error, thrown at import). A fold whose documents count
 * (balances, usage) keeps on each the global `position` of the last event it applied and
 * writes nothing for an event at or below it, so that an event delivered twice counts once.
 */
export function documentsProjection(p: {
  version: number
  collections: readonly CollectionSpec[]
  event_types: readonly string[]
  reads: (event: RecordedEvent) => ReadonlyArray<DocumentKey>
  /**
   * Documents named by what the first read found (a job's counts, keyed by the status it
   * had): read after `reads`' documents and handed to `evolve` after them.
   */
  readsAfter?: (event: RecordedEvent, docs: ReadonlyArray<Doc | null>) => ReadonlyArray<DocumentKey>
  evolve: (docs: ReadonlyArray<Doc | null>, event: RecordedEvent) => readonly Write[]
}): Projection {
  // No promise when the batch holds every document (most events of a batch): a rebuild makes millions of these reads.
  const get = (writer: ProjectionWriter, keys: ReadonlyArray<DocumentKey>): Array<Doc | null> | Promise<Array<Doc | null>> => {
    const got = keys.map(([spec, id]) => writer.get(spec, id))
    return got.some(g => g instanceof Promise) ? Promise.all(got) : (got as Array<Doc | null>)
  }
  const name = p.collections[0].projection
  const strays = p.collections.filter(c => c.projection !== name)
  if (strays.length > 0) throw new Error(`${strays.map(c => c.name).join(', ')}: collections of another projection than ${name}`)
  return {
    name,
    version: p.version,
    collections: p.collections,
    event_types: p.event_types,
    apply(event, writer) {
      const write = (docs: ReadonlyArray<Doc | null>): void => {
        for (const w of p.evolve(docs, event)) {
          if ('put' in w) writer.put(w.put, w.doc)
          else if ('delete' in w) writer.delete(w.delete, w.id)
          else writer.deleteWhere(w.deleteWhere, w.field, w.value)
        }
      }
      const { readsAfter } = p
      return andThen(get(writer, p.reads(event)), first =>
        readsAfter ? andThen(get(writer, readsAfter(event, first)), after => write([...first, ...after])) : write(first)
      )
    }
  }
}

/** Whether a counting document already holds the event (its `position` is at or past it): a second delivery. */
export function alreadyApplied(doc: Doc | null, event: RecordedEvent): boolean {
  return doc !== null && typeof doc.position === 'number' && doc.position >= event.position
}

/** A collection spec with its name and projection checked at compile time. */
export function collection(spec: CollectionSpec): CollectionSpec {
  return spec
}

/** The writes that delete every document of an erased account in `specs` (each declares `user_uuid`). */
export function erasing(specs: readonly CollectionSpec[], user: string): Write[] {
  return specs.map(spec => ({ deleteWhere: spec, field: 'user_uuid', value: user }))
}
