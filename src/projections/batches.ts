import type { BatchEvent, BatchItemResult } from '../domain/batch/events.ts'
import { ERASED } from '../infra/crypto/sealer.ts'
import { collection, eraseAccount, type Projection, type ReadContext } from './projection.ts'

const VERDICTS = ['valid', 'invalid', 'risky', 'unknown'] as const

/** Read model `batches`: one document per batch with its progress, results by verdict and reason, and tokens. */
export interface BatchDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  name: string | null
  status: 'receiving' | 'processing' | 'completed'
  checks: string[]
  environment: 'live' | 'test'
  cost_per_item: number
  created_at: string
  last_chunk_at: string
  closed_at: string | null
  completed_at: string | null
  total: number
  processed: number
  duplicates: number
  by_verdict: Record<string, number>
  by_reason: Record<string, number>
  tokens: { reserved: number, captured: number, released: number }
  revision: number
}

/** Read model `batch_items`: one document per item, its address sealed; `i` its index in the batch (dense from 0). */
export interface BatchItemDoc {
  [k: string]: unknown
  _id: string
  batch_uuid: string
  user_uuid: string
  i: number
  /** Sealed with the owner's data key. */
  email: string
  status: 'pending' | 'deferred' | 'done'
  verdict: string | null
  reason: string | null
  score: number | null
  flags: string[]
  /** Sealed. */
  did_you_mean: string | null
}

/** Lists by account, newest first; the idle sweep by status and latest chunk; erasure by account. */
export const BATCHES = collection({ name: 'batches', projection: 'batches', fields: { user_uuid: 'text', created_at: 'text', status: 'text', last_chunk_at: 'text' }, indexes: [['user_uuid', 'created_at'], ['status', 'last_chunk_at'], ['user_uuid']] })
/** Pages of a batch's results are ranges of `i` (no offset scan, whatever the batch's size); erasure by account. */
export const BATCH_ITEMS = collection({ name: 'batch_items', projection: 'batches', fields: { batch_uuid: 'text', i: 'number', user_uuid: 'text' }, indexes: [['batch_uuid', 'i'], ['user_uuid']] })

const itemId = (batch: string, i: number): string => `${batch}|${String(i).padStart(9, '0')}`

const tally = (counts: Record<string, number>, key: string, delta = 1): Record<string, number> => ({ ...counts, [key]: (counts[key] ?? 0) + delta })

/**
 * Batches and their items. A chunk's part writes its items (pending, or `invalid` at once
 * for bad syntax); results update their items and the batch's counts; the settled chunk
 * adds its capture and release. Cost: one batch document and the event's items per event
 * (an item is read back once, when its result comes). Erased accounts lose both.
 */
export const batchesProjection: Projection = {
  name: 'batches',
  version: 1,
  collections: [BATCHES, BATCH_ITEMS],
  event_types: ['BatchCreated', 'BatchItemsAdded', 'BatchIntakeClosed', 'BatchResultsRecorded', 'BatchItemsDeferred', 'BatchChunkProcessed', 'BatchCompleted', 'UserDeleted'],
  async apply (event, writer) {
    if (event.type === 'UserDeleted') { eraseAccount(writer, [BATCHES, BATCH_ITEMS], event.data.user_uuid as string); return }
    const e = event as unknown as BatchEvent
    const id = e.data.batch_uuid
    if (e.type === 'BatchCreated') {
      const d = e.data
      writer.put(BATCHES, { _id: id, uuid: id, user_uuid: d.user_uuid, name: d.name, status: 'receiving', checks: d.checks, environment: d.environment, cost_per_item: d.cost_per_item, created_at: d.created_at, last_chunk_at: d.created_at, closed_at: null, completed_at: null, total: 0, processed: 0, duplicates: 0, by_verdict: Object.fromEntries(VERDICTS.map(v => [v, 0])), by_reason: {}, tokens: { reserved: 0, captured: 0, released: 0 }, revision: event.revision } satisfies BatchDoc)
      return
    }
    const doc = await writer.get<BatchDoc>(BATCHES, id)
    if (doc === null || doc.revision >= event.revision) return
    let next: BatchDoc = { ...doc, revision: event.revision }
    switch (e.type) {
      case 'BatchItemsAdded': {
        const d = e.data
        let invalid = 0
        d.items.forEach((item, k) => {
          const i = d.first + k
          if (item.invalid) invalid++
          writer.put(BATCH_ITEMS, { _id: itemId(id, i), batch_uuid: id, user_uuid: d.user_uuid, i, email: item.email, status: item.invalid ? 'done' : 'pending', verdict: item.invalid ? 'invalid' : null, reason: item.invalid ? 'invalid_syntax' : null, score: item.invalid ? 0 : null, flags: [], did_you_mean: null } satisfies BatchItemDoc)
        })
        next = { ...next, last_chunk_at: d.added_at, total: doc.total + d.items.length, processed: doc.processed + invalid, duplicates: doc.duplicates + d.duplicates, tokens: { ...doc.tokens, reserved: doc.tokens.reserved + d.amount } }
        if (invalid > 0) next = { ...next, by_verdict: tally(next.by_verdict, 'invalid', invalid), by_reason: tally(next.by_reason, 'invalid_syntax', invalid) }
        break
      }
      case 'BatchResultsRecorded': {
        let { by_verdict: verdicts, by_reason: reasons } = next
        for (const r of e.data.results as BatchItemResult[]) {
          const item = await writer.get<BatchItemDoc>(BATCH_ITEMS, itemId(id, r.i))
          if (item === null) continue
          writer.put(BATCH_ITEMS, { ...item, status: 'done', verdict: r.verdict, reason: r.reason, score: r.score, flags: r.flags, did_you_mean: r.did_you_mean })
          verdicts = tally(verdicts, r.verdict)
          reasons = tally(reasons, r.reason)
        }
        next = { ...next, processed: doc.processed + e.data.results.length, by_verdict: verdicts, by_reason: reasons }
        break
      }
      case 'BatchItemsDeferred':
        for (const { i } of e.data.items) {
          const item = await writer.get<BatchItemDoc>(BATCH_ITEMS, itemId(id, i))
          if (item !== null && item.status === 'pending') writer.put(BATCH_ITEMS, { ...item, status: 'deferred' })
        }
        break
      case 'BatchChunkProcessed':
        next = { ...next, tokens: { reserved: doc.tokens.reserved, captured: doc.tokens.captured + e.data.charge, released: doc.tokens.released + e.data.amount - e.data.charge } }
        break
      case 'BatchIntakeClosed':
        next = { ...next, status: doc.status === 'completed' ? 'completed' : 'processing', closed_at: e.data.closed_at }
        break
      case 'BatchCompleted':
        next = { ...next, status: 'completed', completed_at: e.data.completed_at, closed_at: doc.closed_at ?? e.data.completed_at }
        break
      case 'BatchChunkAbandoned':
        break
    }
    writer.put(BATCHES, next)
  }
}

/** A batch of `owner` (null for an unknown batch or another account's). Cost: one read by id. */
export async function getBatch (rc: ReadContext, owner: string, uuid: string): Promise<BatchDoc | null> {
  const doc = await rc.reads.collection<BatchDoc>(BATCHES).get(uuid)
  return doc !== null && doc.user_uuid === owner ? doc : null
}

/** The account's batches, newest first (interface "Batches"). Cost: an index range on (user_uuid, created_at) and a count on it. */
export async function listBatches (rc: ReadContext, owner: string, page: { limit: number, offset: number }): Promise<{ items: BatchDoc[], total: number }> {
  const c = rc.reads.collection<BatchDoc>(BATCHES)
  const [items, total] = await Promise.all([c.find({ where: { user_uuid: owner }, sort: [['created_at', -1]], limit: page.limit, offset: page.offset }), c.count({ user_uuid: owner })])
  return { items, total }
}

/** An item as the API shows it: its address unsealed (`[erased]` once the key is destroyed). */
export interface BatchItemView { i: number, email: string, status: BatchItemDoc['status'], verdict: string | null, reason: string | null, score: number | null, flags: string[], did_you_mean: string | null }

/**
 * Items `from` to `from + limit - 1` of a batch, in order, unsealed. Cost: one range of the
 * (batch_uuid, i) index, the same at any offset (item indexes are dense from 0).
 */
export async function batchItems (rc: ReadContext, owner: string, batchUuid: string, from: number, limit: number): Promise<BatchItemView[]> {
  const docs = await rc.reads.collection<BatchItemDoc>(BATCH_ITEMS).find({ where: { batch_uuid: batchUuid, i: { gte: from, lte: from + limit - 1 } }, sort: [['i', 1]], limit })
  return await Promise.all(docs.map(async d => ({
    i: d.i,
    email: (await rc.sealer.unseal(owner, d.email)) ?? ERASED,
    status: d.status,
    verdict: d.verdict,
    reason: d.reason,
    score: d.score,
    flags: d.flags,
    did_you_mean: d.did_you_mean === null ? null : (await rc.sealer.unseal(owner, d.did_you_mean)) ?? ERASED
  })))
}

/** Batches whose intake is open and whose latest chunk came before `before` (the idle sweep). Cost: an index range on (status, last_chunk_at), at most `limit`. */
export async function idleBatches (rc: ReadContext, before: string, limit = 100): Promise<Array<{ uuid: string, user_uuid: string }>> {
  const docs = await rc.reads.collection<BatchDoc>(BATCHES).find({ where: { status: 'receiving', last_chunk_at: { lte: before } }, sort: [['last_chunk_at', 1]], limit })
  return docs.map(d => ({ uuid: d.uuid, user_uuid: d.user_uuid }))
}
