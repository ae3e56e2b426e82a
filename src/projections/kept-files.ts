import type { BatchSourceEvent } from '../domain/batch-source/events.ts'
import { collection, documentsProjection, erasing, type Projection, type Write } from '../eventsourcing/projection.ts'
import type { ReadContext } from './read-context.ts'

// What each account keeps of its list files: the
// quota of kept bytes per plan is checked against it before an upload is taken.

/** Read model `kept_files`: one document per file kept (by blob id), with its owner and size. */
interface KeptFileDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  batch_uuid: string
  bytes: number
}

/** Read model `kept_file_usage`: an account's kept files, counted and summed. */
interface KeptFileUsageDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  files: number
  bytes: number
}

const KEPT_FILES = collection({ name: 'kept_files', projection: 'kept_files', fields: { user_uuid: 'text' }, indexes: [['user_uuid']] })
const KEPT_FILE_USAGE = collection({ name: 'kept_file_usage', projection: 'kept_files', fields: { user_uuid: 'text' }, indexes: [['user_uuid']] })

/**
 * Kept files and each account's total, a fold over the file's document and the account's
 * total: a file attached adds its bytes once (its document is the guard: an event
 * delivered again finds it and writes nothing), a file removed takes them off once. Cost:
 * two documents per event. Erased accounts lose both.
 */
export const keptFilesProjection: Projection = documentsProjection({
  version: 1,
  collections: [KEPT_FILES, KEPT_FILE_USAGE],
  event_types: ['BatchSourceAttached', 'BatchSourceRemoved', 'UserDeleted'],
  reads: event => {
    if (event.type === 'UserDeleted') return []
    const d = (event as unknown as BatchSourceEvent).data
    return [
      [KEPT_FILES, d.blob_id],
      [KEPT_FILE_USAGE, d.user_uuid]
    ]
  },
  evolve: (docs, event) => {
    if (event.type === 'UserDeleted') return erasing([KEPT_FILES, KEPT_FILE_USAGE], event.data.user_uuid as string)
    const [file, usage] = docs as [KeptFileDoc | null, KeptFileUsageDoc | null]
    const e = event as unknown as BatchSourceEvent
    const total = usage ?? { _id: e.data.user_uuid, user_uuid: e.data.user_uuid, files: 0, bytes: 0 }
    if (e.type === 'BatchSourceAttached') {
      if (file !== null) return []
      const kept: KeptFileDoc = { _id: e.data.blob_id, user_uuid: e.data.user_uuid, batch_uuid: e.data.batch_uuid, bytes: e.data.bytes }
      return [
        { put: KEPT_FILES, doc: kept },
        { put: KEPT_FILE_USAGE, doc: { ...total, files: total.files + 1, bytes: total.bytes + e.data.bytes } }
      ] satisfies Write[]
    }
    if (file === null) return []
    return [
      { delete: KEPT_FILES, id: file._id },
      { put: KEPT_FILE_USAGE, doc: { ...total, files: Math.max(0, total.files - 1), bytes: Math.max(0, total.bytes - file.bytes) } }
    ]
  }
})

/** What `owner` keeps now: files and bytes (zero when nothing). Cost: one read by id. */
export async function keptFileUsage(rc: ReadContext, owner: string): Promise<{ files: number; bytes: number }> {
  const doc = await rc.reads.collection<KeptFileUsageDoc>(KEPT_FILE_USAGE).get(owner)
  return { files: doc?.files ?? 0, bytes: doc?.bytes ?? 0 }
}
