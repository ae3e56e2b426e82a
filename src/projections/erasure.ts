import type { Projection } from './projection.ts'

/** Read models that hold an account's documents by `user_uuid`. */
const OWNED = ['users', 'api_keys', 'agents', 'webhooks', 'webhook_deliveries', 'webhook_attempts', 'jobs', 'sessions', 'wallets', 'wallet_transactions']

/**
 * Erasure: on UserDeleted, every read model document of the account is purged (its
 * events stay, with its personal data unreadable once its data key is destroyed).
 * Runs after the other projections, so nothing they wrote for the event survives.
 */
export const erasureProjection: Projection = {
  name: 'erasure',
  event_types: ['UserDeleted'],
  async apply (event, { store }) {
    const owner = event.data.user_uuid as string
    for (const name of OWNED) {
      const c = store.collection(name)
      const { items } = await c.find(name === 'users' ? { _id: owner } : { user_uuid: owner })
      for (const doc of items) await c.delete(doc._id)
    }
  }
}
