import type { RecordedEvent } from '../ports/event-store.ts'
import { ERASED } from '../ports/sealer.ts'
import type { UserEvent } from '../domain/user/events.ts'
import { collection, foldProjection, type Folded } from '../eventsourcing/projection.ts'
import type { ReadContext } from './read-context.ts'

/** Read model `users`: the profile of each account; the address stays sealed (unsealed by the queries). */
export interface UserDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  /** Sealed with the account's data key. */
  email: string
  locale: string
  status: 'unconfirmed' | 'confirmed'
  two_factor_enabled: boolean
  banned: boolean
  /** Sessions started before this are void (a ban revokes every session). */
  sessions_valid_from: string | null
  created_at: string
  confirmed_at: string | null
}

/** One document per account, read by id only (bounded by one get). */
export const USERS = collection({ name: 'users', projection: 'users', fields: {}, indexes: [] })

type Doc = Folded<UserDoc>

function evolve(doc: Doc | null, event: RecordedEvent): UserDoc | null {
  const e = event as unknown as UserEvent
  if (e.type === 'UserRegistered') {
    return {
      _id: e.data.user_uuid,
      uuid: e.data.user_uuid,
      email: e.data.email,
      locale: e.data.locale,
      status: 'unconfirmed',
      two_factor_enabled: false,
      banned: false,
      sessions_valid_from: null,
      created_at: e.data.registered_at,
      confirmed_at: null
    }
  }
  if (doc === null) return null
  switch (e.type) {
    case 'UserConfirmed':
      return { ...doc, status: 'confirmed', confirmed_at: e.data.confirmed_at }
    case 'EmailChanged':
      return { ...doc, email: e.data.email }
    case 'LocaleChanged':
      return { ...doc, locale: e.data.locale }
    case 'RegistrationRenewed':
      return { ...doc, locale: e.data.locale }
    case 'TwoFactorEnabled':
      return { ...doc, two_factor_enabled: true }
    case 'TwoFactorDisabled':
      return { ...doc, two_factor_enabled: false }
    case 'UserBanned':
      return { ...doc, banned: true, sessions_valid_from: e.data.banned_at }
    case 'UserUnbanned':
      return { ...doc, banned: false }
    case 'UserDeleted':
      return null
    default:
      return doc
  }
}

export const usersProjection = foldProjection<UserDoc>({
  version: 2,
  collection: USERS,
  event_types: [
    'UserRegistered',
    'RegistrationRenewed',
    'UserConfirmed',
    'EmailChanged',
    'LocaleChanged',
    'UserBanned',
    'UserUnbanned',
    'TwoFactorEnabled',
    'TwoFactorDisabled',
    'UserDeleted'
  ],
  key: 'user_uuid',
  evolve
})

/** An account's read model (the address still sealed), or null. */
export async function getUserDoc(rc: Pick<ReadContext, 'reads'>, uuid: string): Promise<UserDoc | null> {
  return await rc.reads.collection<Doc>(USERS).get(uuid)
}

/** An account with its address unsealed (`[erased]` once its key is destroyed), or null. */
export async function getUser(rc: ReadContext, uuid: string): Promise<UserDoc | null> {
  const doc = await getUserDoc(rc, uuid)
  return doc ? { ...doc, email: (await rc.sealer.unseal(uuid, doc.email)) ?? ERASED } : null
}
