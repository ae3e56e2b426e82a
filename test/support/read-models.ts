import type { EventStore, RecordedEvent } from '../../src/ports/event-store.ts'
import type { Doc, ReadStore } from '../../src/ports/read-store.ts'
import { PROJECTIONS } from '../../src/projections/index.ts'
import { applyBatch, signatureOf } from '../../src/eventsourcing/apply-batch.ts'

/** Every document of every read model, by collection, in `_id` order. */
export async function dumpReadModels(reads: ReadStore): Promise<Record<string, Doc[]>> {
  const out: Record<string, Doc[]> = {}
  for (const spec of PROJECTIONS.flatMap(p => p.collections)) out[spec.name] = await reads.collection(spec).find({ sort: [['_id', 1]] })
  return out
}

/** Every event of `store`, oldest first. */
export async function allEvents(store: EventStore): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = []
  for (let from = 0; ; ) {
    const page = await store.readAll({ from_position: from, max_count: 5_000 }) // exclusive of from_position
    if (page.length === 0) return out
    out.push(...page)
    from = page[page.length - 1].position
  }
}

/**
 * Applies `events` to every projection into `reads` (prepared here) in batches whose sizes
 * `nextBatch` picks, as the runner does: each batch commits with the checkpoints.
 */
export async function replayInto(reads: ReadStore, events: readonly RecordedEvent[], nextBatch: () => number): Promise<void> {
  for (const p of PROJECTIONS) await reads.prepare(p.name, signatureOf(p), p.collections)
  const checkpoints = new Map(PROJECTIONS.map(p => [p.name, 0]))
  for (let i = 0; i < events.length; ) {
    const batch = events.slice(i, i + Math.max(1, nextBatch()))
    i += batch.length
    await applyBatch(reads, PROJECTIONS, checkpoints, batch, batch[batch.length - 1].position)
  }
}

/**
 * Applies `events` to every projection into `reads` with each event delivered twice in a
 * row (at-least-once delivery), in batches of `2 × nextPairs()` deliveries: an event's second
 * delivery always meets its first in the same batch, past the checkpoint's guard, so each
 * projection itself must leave its documents as one delivery did.
 */
export async function replayEachTwiceInto(reads: ReadStore, events: readonly RecordedEvent[], nextPairs: () => number): Promise<void> {
  for (const p of PROJECTIONS) await reads.prepare(p.name, signatureOf(p), p.collections)
  const checkpoints = new Map(PROJECTIONS.map(p => [p.name, 0]))
  for (let i = 0; i < events.length; ) {
    const batch = events.slice(i, i + Math.max(1, nextPairs()))
    i += batch.length
    await applyBatch(
      reads,
      PROJECTIONS,
      checkpoints,
      batch.flatMap(e => [e, e]),
      batch[batch.length - 1].position
    )
  }
}
