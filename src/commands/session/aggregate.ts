import * as session from '../../domain/session/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** A signed-in session (`session-<session uuid>`). */
export const sessions = aggregate('session', session)
