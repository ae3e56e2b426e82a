import * as batch from '../../domain/batch/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** A list verification (`batch-<batch uuid>`). */
export const batches = aggregate('batch', batch)
