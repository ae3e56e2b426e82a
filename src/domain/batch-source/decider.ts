import { DomainError, isBefore } from '../shared.ts'
import type { BatchSourceAttached, BatchSourceEvent } from './events.ts'

/** The file a batch keeps: none, or the one attached last (its blob and expiry). */
export type BatchSourceState =
  | { status: 'none'; user_uuid: string | null }
  | { status: 'kept'; user_uuid: string; batch_uuid: string; blob_id: string; expires_at: string }

export const initialState = (): BatchSourceState => ({ status: 'none', user_uuid: null })

export function evolve(state: BatchSourceState, event: BatchSourceEvent): BatchSourceState {
  if (event.type === 'BatchSourceAttached')
    return {
      status: 'kept',
      user_uuid: event.data.user_uuid,
      batch_uuid: event.data.batch_uuid,
      blob_id: event.data.blob_id,
      expires_at: event.data.expires_at
    }
  return state.status === 'kept' && state.blob_id === event.data.blob_id ? { status: 'none', user_uuid: state.user_uuid } : state
}

/** A stream of a handful of events: no snapshot. */
export const snapshot = { types: [] as string[] }

export type BatchSourceCommand =
  | { type: 'AttachBatchSource'; data: Omit<BatchSourceAttached['data'], 'attached_at'> & { now: string } }
  | { type: 'RemoveBatchSource'; data: { blob_id: string; reason: 'expired' | 'requested'; now: string } }

/**
 * A batch's kept file (stream `batch-source-<batch uuid>`).
 * - AttachBatchSource → BatchSourceRemoved (`replaced`) of the file kept before, if any, then
 *   BatchSourceAttached. The owner is the batch's (the handler checks it).
 * - RemoveBatchSource → BatchSourceRemoved when that blob is the one kept and, for `expired`,
 *   its time has come; nothing otherwise (a sweep that runs twice removes once).
 * @throws DomainError forbidden `batch_source.not_owner` when the stream is another account's.
 */
export function decide(command: BatchSourceCommand, state: BatchSourceState): BatchSourceEvent[] {
  if (command.type === 'AttachBatchSource') {
    const d = command.data
    if (state.user_uuid !== null && state.user_uuid !== d.user_uuid)
      throw new DomainError('forbidden', 'batch_source.not_owner', "this batch is another account's")
    const replaced: BatchSourceEvent[] =
      state.status === 'kept'
        ? [
            {
              type: 'BatchSourceRemoved',
              data: { batch_uuid: d.batch_uuid, user_uuid: state.user_uuid, blob_id: state.blob_id, reason: 'replaced', removed_at: d.now }
            }
          ]
        : []
    const { now, ...rest } = d
    return [...replaced, { type: 'BatchSourceAttached', data: { ...rest, attached_at: now } }]
  }
  const d = command.data
  if (state.status !== 'kept' || state.blob_id !== d.blob_id) return []
  if (d.reason === 'expired' && isBefore(d.now, state.expires_at)) return []
  return [
    {
      type: 'BatchSourceRemoved',
      data: { batch_uuid: state.batch_uuid, user_uuid: state.user_uuid, blob_id: state.blob_id, reason: d.reason, removed_at: d.now }
    }
  ]
}
