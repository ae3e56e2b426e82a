import * as apikey from '../../domain/apikey/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** An account's API keys (`apikeys-<user uuid>`). */
export const apiKeys = aggregate('apikeys', apikey)
