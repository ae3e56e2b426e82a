import type { RecordedEvent } from '../ports/event-store.ts'
import type { SessionEvent, SessionSnapshotted } from '../domain/session/events.ts'
import { collection, foldProjection, type Folded } from '../eventsourcing/projection.ts'
import { owned, type ReadContext } from './read-context.ts'

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
  /** The OAuth client of a grant (method `oauth`), null for a sign-in. */
  client_id?: string | null
}

/**
 * By id (the auth check), an account's open sessions newest first (index user, revoked_at,
 * started_at), and every open session by start (index revoked_at, started_at: the operator's
 * "end all sessions").
 */
export const SESSIONS = collection({
  name: 'sessions',
  projection: 'sessions',
  fields: { user_uuid: 'text', revoked_at: 'text', started_at: 'text' },
  indexes: [
    ['user_uuid', 'revoked_at', 'started_at'],
    ['revoked_at', 'started_at']
  ]
})

function evolve(doc: Folded<SessionDoc> | null, event: RecordedEvent): SessionDoc | null {
  const e = event as unknown as Exclude<SessionEvent, SessionSnapshotted>
  if (e.type === 'SessionStarted')
    return {
      ...owned(e.data.session_uuid, e.data.user_uuid),
      method: e.data.method,
      started_at: e.data.started_at,
      last_used_at: e.data.started_at,
      expires_at: e.data.expires_at,
      revoked_at: null,
      client_id: e.data.grant?.client_id ?? null
    }
  if (doc === null) return null
  switch (e.type) {
    case 'SessionRefreshed':
      return { ...doc, last_used_at: e.data.refreshed_at, expires_at: e.data.expires_at }
    case 'SessionRevoked':
      return { ...doc, revoked_at: e.data.revoked_at }
    default:
      return doc
  }
}

export const sessionsProjection = foldProjection<SessionDoc>({
  version: 4,
  collection: SESSIONS,
  event_types: ['SessionStarted', 'SessionRefreshed', 'SessionRevoked'],
  erase: true,
  key: 'session_uuid',
  evolve
})

/** A session by uuid (primary key), or null. */
export async function getSession(rc: Pick<ReadContext, 'reads'>, uuid: string): Promise<SessionDoc | null> {
  return await rc.reads.collection<Folded<SessionDoc>>(SESSIONS).get(uuid)
}

/** The account's sessions not revoked, newest first (bounded by the account's open sessions). */
export async function openSessions(rc: Pick<ReadContext, 'reads'>, owner: string): Promise<SessionDoc[]> {
  return await rc.reads.collection<Folded<SessionDoc>>(SESSIONS).find({ where: { user_uuid: owner, revoked_at: null }, sort: [['started_at', -1]] })
}

/**
 * Open sessions of every account started in `[from, to]`, oldest first (ties by id), at
 * most `limit`: one range of the index (revoked_at, started_at). Cost: `limit` entries.
 */
export async function openSessionsStarted(rc: Pick<ReadContext, 'reads'>, range: { from: string; to: string; limit: number }): Promise<SessionDoc[]> {
  return await rc.reads
    .collection<Folded<SessionDoc>>(SESSIONS)
    .find({ where: { revoked_at: null, started_at: { gte: range.from, lte: range.to } }, sort: [['started_at', 1]], limit: range.limit })
}

/** Open sessions started exactly at `at` with ids from `id_from` on, by id (the ties of a page of `openSessionsStarted`). Cost: `limit` entries. */
export async function openSessionsStartedAt(rc: Pick<ReadContext, 'reads'>, tie: { at: string; id_from: string; limit: number }): Promise<SessionDoc[]> {
  return await rc.reads
    .collection<Folded<SessionDoc>>(SESSIONS)
    .find({ where: { revoked_at: null, started_at: tie.at, _id: { gte: tie.id_from } }, sort: [['_id', 1]], limit: tie.limit })
}
