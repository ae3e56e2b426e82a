import * as job from '../../domain/job/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** A single verification (`job-<job uuid>`). */
export const jobs = aggregate('job', job)
