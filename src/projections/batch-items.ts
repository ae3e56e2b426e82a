import { parseAddress } from '../verifier/syntax.ts'
import type { BatchEvent, BatchItemResult } from '../domain/batch/events.ts'
import { ERASED } from '../ports/sealer.ts'
import { collection, type Write } from '../eventsourcing/projection.ts'
import type { ReadContext } from './read-context.ts'

// The items of the batches projection (projections/batches.ts folds both): a batch's items
// kept a hundred to a document of `batch_item_blocks`, the writes that change them, and the
// query that reads a range of them.

/** An item of a batch as its block keeps it: the address sealed. */
export interface BatchItemEntry {
  /** Sealed with the owner's data key. */
  email: string
  status: 'pending' | 'deferred' | 'done'
  verdict: string | null
  reason: string | null
  score: number | null
  flags: string[]
  /** Sealed. */
  did_you_mean: string | null
  /** Sealed; absent on items recorded before the field existed. */
  mx_host?: string | null
  smtp_provider?: string | null
  checked_at?: string | null
}

/** Items per document of `batch_item_blocks` (a results page of up to 96 reads one or two). */
const ITEM_BLOCK = 100

/**
 * Read model `batch_item_blocks`: a batch's items `block * ITEM_BLOCK` to
 * `block * ITEM_BLOCK + ITEM_BLOCK - 1` (`i`, dense from 0) in one document, `items[k]`
 * the item `block * ITEM_BLOCK + k` (null until it is added). One document per hundred
 * items rather than one per item: a part of a chunk writes, and its results rewrite, a
 * few dozen documents, not thousands.
 */
export interface BatchItemBlockDoc {
  [k: string]: unknown
  _id: string
  batch_uuid: string
  user_uuid: string
  block: number
  items: Array<BatchItemEntry | null>
}

/** Pages of a batch's results are ranges of `block` (no offset scan, whatever the batch's size); erasure by account. */
export const BATCH_ITEM_BLOCKS = collection({
  name: 'batch_item_blocks',
  projection: 'batches',
  fields: { batch_uuid: 'text', block: 'number', user_uuid: 'text' },
  indexes: [['batch_uuid', 'block'], ['user_uuid']]
})

export const blockId = (batch: string, block: number): string => `${batch}|${String(block).padStart(9, '0')}`

/** The item indexes an event of a batch's stream changes (none for events of the batch alone). */
export function itemsOf(e: BatchEvent): number[] {
  switch (e.type) {
    case 'BatchItemsAdded':
      return e.data.items.map((_, k) => e.data.first + k)
    case 'BatchResultsRecorded':
      return (e.data.results as BatchItemResult[]).map(r => r.i)
    case 'BatchItemsDeferred':
      return e.data.items.map(item => item.i)
    default:
      return []
  }
}

/** The blocks holding `indexes`, ascending, each once. */
export const blocksOf = (indexes: readonly number[]): number[] => [...new Set(indexes.map(i => Math.floor(i / ITEM_BLOCK)))].sort((a, b) => a - b)

/**
 * The writes that change items of a batch, each block written once: `blocks` are the
 * stored block documents (null when absent) of `blocksOf(indexes)`, in that order;
 * `change(i, entry)` gets the stored entry (null when absent) and returns the new one, or
 * undefined to leave it. A block without any change is not written.
 */
export function changeItems(
  blocks: ReadonlyArray<BatchItemBlockDoc | null>,
  batch: string,
  user: string,
  indexes: readonly number[],
  change: (i: number, entry: BatchItemEntry | null) => BatchItemEntry | undefined
): Write[] {
  const numbers = blocksOf(indexes)
  const place = new Map(numbers.map((block, k) => [block, k]))
  const items = numbers.map((_, k) => blocks[k]?.items.slice() ?? [])
  const changed = new Set<number>()
  for (const i of indexes) {
    const at = place.get(Math.floor(i / ITEM_BLOCK))!
    const k = i - numbers[at] * ITEM_BLOCK
    const next = change(i, items[at][k] ?? null)
    if (next === undefined) continue
    while (items[at].length < k) items[at].push(null)
    items[at][k] = next
    changed.add(at)
  }
  return [...changed].map(at => ({
    put: BATCH_ITEM_BLOCKS,
    doc: {
      _id: blockId(batch, numbers[at]),
      batch_uuid: batch,
      user_uuid: blocks[at]?.user_uuid ?? user,
      block: numbers[at],
      items: items[at]
    } satisfies BatchItemBlockDoc
  }))
}

/** An item as the API shows it: its address unsealed (`[erased]` once the key is destroyed). */
export interface BatchItemView {
  i: number
  /** The address as submitted. */
  email: string
  /** The address as asked: its domain in ASCII (IDNA A-labels, RFC 5891); null when its syntax does not hold (or it was erased). */
  normalized: string | null
  status: BatchItemEntry['status']
  verdict: string | null
  reason: string | null
  score: number | null
  flags: string[]
  did_you_mean: string | null
  mx_host: string | null
  smtp_provider: string | null
  checked_at: string | null
}

/**
 * Items `from` to `from + limit - 1` of a batch, in order, unsealed. Cost: one range of the
 * (batch_uuid, block) index, `limit / ITEM_BLOCK + 1` documents at most, the same at any
 * offset (item indexes are dense from 0).
 */
export async function batchItems(rc: ReadContext, owner: string, batchUuid: string, from: number, limit: number): Promise<BatchItemView[]> {
  if (limit <= 0) return []
  const last = from + limit - 1
  const blocks = await rc.reads
    .collection<BatchItemBlockDoc>(BATCH_ITEM_BLOCKS)
    .find({ where: { batch_uuid: batchUuid, block: { gte: Math.floor(from / ITEM_BLOCK), lte: Math.floor(last / ITEM_BLOCK) } }, sort: [['block', 1]] })
  const docs: Array<BatchItemEntry & { i: number }> = []
  for (const b of blocks) {
    b.items.forEach((item, k) => {
      const i = b.block * ITEM_BLOCK + k
      if (item !== null && i >= from && i <= last) docs.push({ ...item, i })
    })
  }
  return await Promise.all(
    docs.map(async d => {
      const email = await rc.sealer.unseal(owner, d.email)
      const parsed = email === null ? null : parseAddress(email)
      return {
        i: d.i,
        email: email ?? ERASED,
        normalized: parsed?.ok ? parsed.normalized : null,
        status: d.status,
        verdict: d.verdict,
        reason: d.reason,
        score: d.score,
        flags: d.flags,
        did_you_mean: d.did_you_mean === null ? null : ((await rc.sealer.unseal(owner, d.did_you_mean)) ?? ERASED),
        mx_host: d.mx_host === undefined || d.mx_host === null ? null : ((await rc.sealer.unseal(owner, d.mx_host)) ?? ERASED),
        smtp_provider: d.smtp_provider ?? null,
        checked_at: d.checked_at ?? null
      }
    })
  )
}
