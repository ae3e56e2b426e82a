import * as agent from '../../domain/agent/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** An account's agents (`agents-<user uuid>`). */
export const agents = aggregate('agents', agent)
