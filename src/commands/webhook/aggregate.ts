import * as webhook from '../../domain/webhook/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** An account's webhook endpoints (`webhooks-<user uuid>`). */
export const webhooks = aggregate('webhooks', webhook)
