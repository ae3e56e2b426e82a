import type { Event } from '../shared.ts'

/**
 * A customer's list file kept beside its batch (stream `batch-source-<batch uuid>`): the blob that holds it sealed (`blob_id` in the blob
 * store, under the owner), its name (sealed with the account's data key: the customer's
 * text), its format and size, the address column and whether the first row is a header,
 * and when it is removed unless the account is erased first.
 */
export type BatchSourceAttached = Event<
  'BatchSourceAttached',
  {
    batch_uuid: string
    user_uuid: string
    blob_id: string
    file_name: string
    format: 'csv' | 'txt' | 'xlsx'
    bytes: number
    /** The address column the customer chose: a header name or a 1-based number; null: detected from the values. */
    column: string | null
    attached_at: string
    expires_at: string
  }
>

/** The file is gone: replaced by a newer one, its retention over, or removed on request. The blob worker deletes its bytes. */
export type BatchSourceRemoved = Event<
  'BatchSourceRemoved',
  { batch_uuid: string; user_uuid: string; blob_id: string; reason: 'replaced' | 'expired' | 'requested'; removed_at: string }
>

export type BatchSourceEvent = BatchSourceAttached | BatchSourceRemoved
