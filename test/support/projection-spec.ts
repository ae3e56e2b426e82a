import type { Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import type { RecordedEvent } from '../../src/ports/event-store.ts'
import type { Doc } from '../../src/ports/read-store.ts'
import { SqliteReadStore } from '../../src/infra/readstore/sqlite.ts'
import type { Projection } from '../../src/eventsourcing/projection.ts'
import { applyBatch, signatureOf } from '../../src/eventsourcing/apply-batch.ts'

/** An event as the store records it, before its position is given by the spec. */
export interface SpecEvent {
  stream: string
  type: string
  data: Record<string, unknown>
  /** When it happened (RFC 3339); the metadata's `occurred_at`. */
  at: string
}

/** A recorded event of a spec: `type` in `stream` at `at`. */
export const event = (stream: string, type: string, data: Record<string, unknown>, at: string): SpecEvent => ({ stream, type, data, at })

/** The events with their ids (in position order: a document keyed by event id sorts as its event), per-stream revisions and global positions (1-based, in the given order). */
function record(events: readonly SpecEvent[]): RecordedEvent[] {
  const revisions = new Map<string, number>()
  return events.map((e, i) => {
    const revision = revisions.get(e.stream) ?? 0
    revisions.set(e.stream, revision + 1)
    return {
      id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      stream: e.stream,
      revision,
      position: i + 1,
      type: e.type,
      data: e.data,
      metadata: { occurred_at: e.at }
    }
  })
}

/** Every document of the projection's collections, by collection name, in `_id` order. */
async function dump(reads: SqliteReadStore, projection: Projection): Promise<Record<string, Doc[]>> {
  const out: Record<string, Doc[]> = {}
  for (const spec of projection.collections) out[spec.name] = await reads.collection(spec).find({ sort: [['_id', 1]] })
  return out
}

/**
 * Applies `events` to the projection in a fresh SQLite read store under `dir`, in one
 * batch: once each, or (`deliveries` 2) each twice in a row and then all of them again
 * (the batch applied again from its checkpoint, after later events).
 */
async function project(dir: string, projection: Projection, events: readonly RecordedEvent[], deliveries: 1 | 2): Promise<Record<string, Doc[]>> {
  const reads = new SqliteReadStore(join(dir, `${randomUUID()}.db`))
  try {
    await reads.prepare(projection.name, signatureOf(projection), projection.collections)
    const relevant = events.filter(e => projection.event_types.includes(e.type))
    if (relevant.length > 0)
      await applyBatch(
        reads,
        [projection],
        new Map([[projection.name, 0]]),
        deliveries === 1 ? relevant : [...relevant.flatMap(e => [e, e]), ...relevant],
        relevant[relevant.length - 1].position
      )
    return await dump(reads, projection)
  } finally {
    await reads.close()
  }
}

/**
 * given(...events).when(...events).then(expected) — a projection's spec, Emmett's
 * given/when/then for read models: the given and the new events are applied through the
 * runner's own batch (`applyBatch`) into a fresh SQLite read store; `then` compares the
 * collections it names (documents in `_id` order, each matched with `t.match`, so a
 * document names the fields the rule is about) and then applies every event twice in a row
 * and the whole history once more (at-least-once delivery, within the same batch) and
 * asserts the read model is exactly what one delivery made.
 */
export function projectionSpec(t: Test, projection: Projection) {
  return (...given: SpecEvent[]) => ({
    when: (...events: SpecEvent[]) => ({
      then: async (expected: Record<string, Array<Record<string, unknown>>>, message = 'projects the expected documents') => {
        const dir = mkdtempSync(join(tmpdir(), 'projection-spec-'))
        t.teardown(() => rmSync(dir, { recursive: true, force: true }))
        const recorded = record([...given, ...events])
        const once = await project(dir, projection, recorded, 1)
        for (const [name, docs] of Object.entries(expected)) {
          t.ok(name in once, `${name} is a collection of ${projection.name}`)
          t.equal(once[name]?.length, docs.length, `${message}: ${docs.length} document(s) in ${name}`)
          t.match(once[name], docs, `${message}: ${name}`)
        }
        t.same(await project(dir, projection, recorded, 2), once, `${message}: each event delivered twice leaves the same documents`)
      }
    })
  })
}
