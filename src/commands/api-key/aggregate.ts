import * as apikey from '../../domain/api-key/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/**
 * An account's API keys (`apikeys-<user uuid>`). The category is stored in every event's
 * stream name, so it stays `apikeys` though the concept is spelled `api-key` everywhere else.
 */
export const apiKeys = aggregate('apikeys', apikey)
