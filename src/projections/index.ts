import type { Projection } from '../eventsourcing/projection.ts'
import { usersProjection } from './users.ts'
import { sessionsProjection } from './sessions.ts'
import { apiKeysProjection } from './api-keys.ts'
import { agentsProjection } from './agents.ts'
import { webhookDeliveriesProjection, webhooksProjection } from './webhooks.ts'
import { jobsProjection } from './jobs.ts'
import { walletsProjection } from './wallets.ts'
import { statsProjection } from './stats.ts'
import { notificationsProjection } from './notifications.ts'
import { subscriptionsProjection } from './subscriptions.ts'
import { batchesProjection } from './batches.ts'
import { oauthClientsProjection } from './oauth-clients.ts'
import { keptFilesProjection } from './kept-files.ts'

/**
 * Every projection, in the order the runner applies an event to them. Each owns its
 * collections and is rebuilt on its own (`svc projections rebuild <name>`); each erases
 * an account's documents itself on UserDeleted.
 */
export const PROJECTIONS: readonly Projection[] = [
  usersProjection,
  sessionsProjection,
  apiKeysProjection,
  agentsProjection,
  webhooksProjection,
  webhookDeliveriesProjection,
  jobsProjection,
  walletsProjection,
  statsProjection,
  notificationsProjection,
  subscriptionsProjection,
  batchesProjection,
  oauthClientsProjection,
  keptFilesProjection
]

/** The projection named `name`. @throws Error naming the known ones. */
export function projectionNamed(name: string): Projection {
  const p = PROJECTIONS.find(x => x.name === name)
  if (!p) throw new Error(`no projection ${name}; one of: ${PROJECTIONS.map(x => x.name).join(', ')}`)
  return p
}
