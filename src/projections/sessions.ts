import type { Projection } from './projection.ts'
import { alreadyApplied } from './projection.ts'
import type { SessionEvent, SessionSnapshotted } from '../domain/session/events.ts'

/** Read model `sessions`: the account's sessions (never the refresh hash). */
export interface SessionDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  method: string
  started_at: string
  last_used_at: string
  expires_at: string
  revoked_at: string | null
  revision: number
}

export const sessionsProjection: Projection = {
  name: 'sessions',
  event_types: ['SessionStarted', 'SessionRefreshed', 'SessionRevoked'],
  async apply (event, { store }) {
    const sessions = store.collection<SessionDoc>('sessions')
    const e = event as unknown as Exclude<SessionEvent, SessionSnapshotted>
    const doc = await sessions.get(e.data.session_uuid)
    if (alreadyApplied(doc, event)) return
    switch (e.type) {
      case 'SessionStarted':
        await sessions.put({ _id: e.data.session_uuid, uuid: e.data.session_uuid, user_uuid: e.data.user_uuid, method: e.data.method, started_at: e.data.started_at, last_used_at: e.data.started_at, expires_at: e.data.expires_at, revoked_at: null, revision: event.revision })
        break
      case 'SessionRefreshed':
        if (doc) await sessions.put({ ...doc, last_used_at: e.data.refreshed_at, expires_at: e.data.expires_at, revision: event.revision })
        break
      case 'SessionRevoked':
        if (doc) await sessions.put({ ...doc, revoked_at: e.data.revoked_at, revision: event.revision })
        break
    }
  }
}
