import type { RecordedEvent } from '../infra/eventstore/port.ts'
import type { Doc, ReadStore } from '../infra/readstore/port.ts'
import type { Sealer } from '../infra/crypto/sealer.ts'

export interface ProjectionContext {
  store: ReadStore
  sealer: Sealer
}

/**
 * A projection: turns events of `event_types` into read model documents. `apply` must be
 * idempotent (single-stream documents keep the stream revision they reflect and ignore
 * events at or below it), because an event can be applied again after a restart.
 */
export interface Projection {
  name: string
  event_types: readonly string[]
  apply (event: RecordedEvent, ctx: ProjectionContext): Promise<void>
}

/** True when `doc` already reflects `event` (single-stream revision guard). */
export function alreadyApplied (doc: (Doc & { revision?: number }) | null, event: RecordedEvent): boolean {
  return doc !== null && typeof doc.revision === 'number' && doc.revision >= event.revision
}
