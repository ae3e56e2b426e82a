import type { BatchEvent, BatchItemResult } from '../domain/batch/events.ts'
import type { BatchSourceAttached, BatchSourceEvent } from '../domain/batch-source/events.ts'
import { ERASED } from '../ports/sealer.ts'
import type { Environment } from '../domain/shared.ts'
import { BATCH_ITEM_BLOCKS, blockId, blocksOf, changeItems, itemsOf, type BatchItemBlockDoc } from './batch-items.ts'
import { collection, documentsProjection, erasing, type DocumentKey, type Projection, type Write } from '../eventsourcing/projection.ts'
import { owned, type ReadContext, nameOpened, newestOwned } from './read-context.ts'

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
  environment: Environment
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
  tokens: { reserved: number; captured: number; released: number }
  revision: number
  /** The list's file kept beside the batch (its name sealed), or none; absent on documents written before files were kept. */
  source?: BatchSourceDoc | null
  /** When the kept file goes (the retention sweep's index); null without one. */
  source_expires_at?: string | null
  /** While live items are held because egress to mail servers is blocked (BatchHeld, until the next results): since when and until when at the latest; absent or null otherwise. */
  held?: { reason: 'egress_blocked'; since: string; until: string } | null
}

/** A kept file as the read model holds it. */
export type BatchSourceDoc = Omit<BatchSourceAttached['data'], 'batch_uuid' | 'user_uuid'>

/** Lists by account, and by account and environment (issue 42 item 10), newest first; the idle sweep by status and latest chunk; erasure by account. */
const BATCHES = collection({
  name: 'batches',
  projection: 'batches',
  fields: { user_uuid: 'text', environment: 'text', created_at: 'text', status: 'text', last_chunk_at: 'text', source_expires_at: 'text' },
  indexes: [['user_uuid', 'created_at'], ['user_uuid', 'environment', 'created_at'], ['status', 'last_chunk_at'], ['user_uuid'], ['source_expires_at']]
})
const tally = (counts: Record<string, number>, key: string, delta = 1): Record<string, number> => ({ ...counts, [key]: (counts[key] ?? 0) + delta })

/** A new batch's document. */
function created(e: Extract<BatchEvent, { type: 'BatchCreated' }>, revision: number): BatchDoc {
  const d = e.data
  return {
    ...owned(d.batch_uuid, d.user_uuid),
    name: d.name,
    status: 'receiving',
    checks: d.checks,
    environment: d.environment,
    cost_per_item: d.cost_per_item,
    created_at: d.created_at,
    last_chunk_at: d.created_at,
    closed_at: null,
    completed_at: null,
    total: 0,
    processed: 0,
    duplicates: 0,
    by_verdict: Object.fromEntries(VERDICTS.map(v => [v, 0])),
    by_reason: {},
    tokens: { reserved: 0, captured: 0, released: 0 },
    revision
  }
}

/** The writes of an event of the batch's own stream: its document and the blocks of the items it changes (`blocks`, see `changeItems`). */
function evolveBatch(doc: BatchDoc | null, blocks: ReadonlyArray<BatchItemBlockDoc | null>, e: BatchEvent, revision: number): Write[] {
  if (e.type === 'BatchCreated') return doc === null ? [{ put: BATCHES, doc: created(e, revision) }] : []
  if (doc === null || doc.revision >= revision) return []
  const id = doc.uuid
  let next: BatchDoc = { ...doc, revision }
  let items: Write[] = []
  switch (e.type) {
    case 'BatchItemsAdded': {
      const d = e.data
      const invalid = d.items.filter(item => item.invalid).length
      items = changeItems(blocks, id, d.user_uuid, itemsOf(e), i => {
        const item = d.items[i - d.first]
        return {
          email: item.email,
          status: item.invalid ? 'done' : 'pending',
          verdict: item.invalid ? 'invalid' : null,
          reason: item.invalid ? 'invalid_syntax' : null,
          score: item.invalid ? 0 : null,
          flags: [],
          did_you_mean: null
        }
      })
      next = {
        ...next,
        last_chunk_at: d.added_at,
        total: doc.total + d.items.length,
        processed: doc.processed + invalid,
        duplicates: doc.duplicates + d.duplicates,
        tokens: { ...doc.tokens, reserved: doc.tokens.reserved + d.amount }
      }
      if (invalid > 0) next = { ...next, by_verdict: tally(next.by_verdict, 'invalid', invalid), by_reason: tally(next.by_reason, 'invalid_syntax', invalid) }
      break
    }
    case 'BatchResultsRecorded': {
      const verdicts = { ...next.by_verdict }
      const reasons = { ...next.by_reason }
      const results = new Map((e.data.results as BatchItemResult[]).map(r => [r.i, r]))
      items = changeItems(blocks, id, doc.user_uuid, itemsOf(e), (i, item) => {
        const r = results.get(i)!
        if (item === null) return undefined
        verdicts[r.verdict] = (verdicts[r.verdict] ?? 0) + 1
        reasons[r.reason] = (reasons[r.reason] ?? 0) + 1
        return {
          ...item,
          status: 'done',
          verdict: r.verdict,
          reason: r.reason,
          score: r.score,
          flags: r.flags,
          did_you_mean: r.did_you_mean,
          mx_host: r.mx_host ?? null,
          smtp_provider: r.smtp_provider ?? null,
          checked_at: r.checked_at ?? null
        }
      })
      next = { ...next, processed: doc.processed + e.data.results.length, by_verdict: verdicts, by_reason: reasons, held: null }
      break
    }
    case 'BatchHeld':
      next = { ...next, held: { reason: e.data.reason, since: e.data.held_at, until: e.data.until } }
      break
    case 'BatchItemsDeferred':
      items = changeItems(blocks, id, doc.user_uuid, itemsOf(e), (_, item) =>
        item !== null && item.status === 'pending' ? { ...item, status: 'deferred' } : undefined
      )
      break
    case 'BatchChunkProcessed':
      next = {
        ...next,
        tokens: {
          reserved: doc.tokens.reserved,
          captured: doc.tokens.captured + e.data.charge,
          released: doc.tokens.released + e.data.amount - e.data.charge
        }
      }
      break
    case 'BatchIntakeClosed':
      next = { ...next, status: doc.status === 'completed' ? 'completed' : 'processing', closed_at: e.data.closed_at }
      break
    case 'BatchCompleted':
      next = { ...next, status: 'completed', completed_at: e.data.completed_at, closed_at: doc.closed_at ?? e.data.completed_at, held: null }
      break
    case 'BatchChunkAbandoned':
      break
  }
  return [...items, { put: BATCHES, doc: next }]
}

/** The writes of an event of the batch's file stream (revisions of its own): applied by blob id, so a replay changes nothing. */
function evolveSource(doc: BatchDoc | null, e: BatchSourceEvent): Write[] {
  if (doc === null) return []
  if (e.type === 'BatchSourceAttached') {
    const { batch_uuid: _b, user_uuid: _u, ...kept } = e.data
    return [{ put: BATCHES, doc: { ...doc, source: kept, source_expires_at: kept.expires_at } }]
  }
  return doc.source?.blob_id === e.data.blob_id ? [{ put: BATCHES, doc: { ...doc, source: null, source_expires_at: null } }] : []
}

const SOURCE_EVENTS = new Set(['BatchSourceAttached', 'BatchSourceRemoved'])

/**
 * Batches and their items, a fold over the batch's document and the blocks of the items
 * an event changes (named by the event). A chunk's part writes its items (pending, or
 * `invalid` at once for bad syntax); results update their items and the batch's counts;
 * the settled chunk adds its capture and release. The batch's `revision` guards it and
 * its blocks: an event delivered again writes nothing. Cost: one batch document and the
 * blocks of the event's items (a part of 2,000 items: about 21). Erased accounts lose both.
 */
export const batchesProjection: Projection = documentsProjection({
  // 4: the environment indexed (issue 42 item 10).
  version: 4,
  collections: [BATCHES, BATCH_ITEM_BLOCKS],
  event_types: [
    'BatchCreated',
    'BatchItemsAdded',
    'BatchIntakeClosed',
    'BatchResultsRecorded',
    'BatchItemsDeferred',
    'BatchHeld',
    'BatchChunkProcessed',
    'BatchCompleted',
    'BatchSourceAttached',
    'BatchSourceRemoved',
    'UserDeleted'
  ],
  reads: event => {
    if (event.type === 'UserDeleted') return []
    const id = event.data.batch_uuid as string
    const blocks = SOURCE_EVENTS.has(event.type) ? [] : blocksOf(itemsOf(event as unknown as BatchEvent))
    return [[BATCHES, id], ...blocks.map((b): DocumentKey => [BATCH_ITEM_BLOCKS, blockId(id, b)])]
  },
  evolve: ([doc, ...blocks], event) => {
    if (event.type === 'UserDeleted') return erasing([BATCHES, BATCH_ITEM_BLOCKS], event.data.user_uuid as string)
    if (SOURCE_EVENTS.has(event.type)) return evolveSource(doc as BatchDoc | null, event as unknown as BatchSourceEvent)
    return evolveBatch(doc as BatchDoc | null, blocks as Array<BatchItemBlockDoc | null>, event as unknown as BatchEvent, event.revision)
  }
})

/**
 * A batch of `owner` in `environment` (null: either); null for an unknown batch, another
 * account's or another environment's (issue 42 item 10). Cost: one read by id.
 */
export async function getBatch(rc: ReadContext, owner: string, environment: Environment | null, uuid: string): Promise<BatchDoc | null> {
  const doc = await rc.reads.collection<BatchDoc>(BATCHES).get(uuid)
  return doc !== null && doc.user_uuid === owner && (environment === null || doc.environment === environment) ? await nameOpened(rc, doc) : null
}

/**
 * The account's batches in `environment` (null: both), newest first (interface "Batches").
 * Cost: an index range on (user_uuid, created_at), or (user_uuid, environment, created_at), and a count on it.
 */
export async function listBatches(
  rc: ReadContext,
  owner: string,
  environment: Environment | null,
  page: { limit: number; offset: number }
): Promise<{ items: BatchDoc[]; total: number }> {
  return await newestOwned<BatchDoc>(rc, BATCHES, owner, page, environment === null ? {} : { environment })
}

/** Kept files whose retention ended before `before` (the blob worker's sweep). Cost: an index range on source_expires_at, at most `limit`. */
export async function expiredSources(rc: ReadContext, before: string, limit = 100): Promise<Array<{ batch_uuid: string; user_uuid: string; blob_id: string }>> {
  const docs = await rc.reads.collection<BatchDoc>(BATCHES).find({ where: { source_expires_at: { lte: before } }, sort: [['source_expires_at', 1]], limit })
  return docs.filter(d => d.source).map(d => ({ batch_uuid: d.uuid, user_uuid: d.user_uuid, blob_id: d.source!.blob_id }))
}

/** A batch's kept file with its name opened, or null. */
export async function batchSource(rc: ReadContext, doc: BatchDoc): Promise<(BatchSourceDoc & { name: string }) | null> {
  if (!doc.source) return null
  return { ...doc.source, name: (await rc.sealer.unseal(doc.user_uuid, doc.source.file_name)) ?? ERASED }
}

/** Batches whose intake is open and whose latest chunk came before `before` (the idle sweep). Cost: an index range on (status, last_chunk_at), at most `limit`. */
export async function idleBatches(rc: ReadContext, before: string, limit = 100): Promise<Array<{ uuid: string; user_uuid: string }>> {
  const docs = await rc.reads
    .collection<BatchDoc>(BATCHES)
    .find({ where: { status: 'receiving', last_chunk_at: { lte: before } }, sort: [['last_chunk_at', 1]], limit })
  return docs.map(d => ({ uuid: d.uuid, user_uuid: d.user_uuid }))
}
