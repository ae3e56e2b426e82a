import * as batchSource from '../../domain/batch-source/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** A batch's uploaded file (`batch-source-<batch uuid>`). */
export const batchSources = aggregate('batch-source', batchSource)
