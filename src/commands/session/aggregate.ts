import * as session from '../../domain/session/decider.ts'
import { aggregate } from '../aggregate.ts'

/** A signed-in session (`session-<session uuid>`). */
export const sessions = aggregate('session', session)
