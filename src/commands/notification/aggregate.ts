import * as notification from '../../domain/notification/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** What an account has seen of its notification feed (`notifications-<user uuid>`). */
export const notifications = aggregate('notifications', notification)
