import * as user from '../../domain/user/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** An account (`user-<user uuid>`). */
export const users = aggregate('user', user)
