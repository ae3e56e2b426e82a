import type { Projection } from './projection.ts'
import { alreadyApplied } from './projection.ts'
import { ERASED } from '../infra/crypto/sealer.ts'
import type { UserEvent } from '../domain/user/events.ts'

/** Read model `users`: the profile of each account. */
export interface UserDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  email: string
  locale: string
  status: 'unconfirmed' | 'confirmed'
  two_factor_enabled: boolean
  banned: boolean
  /** Sessions started before this are void (a ban revokes every session). */
  sessions_valid_from: string | null
  created_at: string
  confirmed_at: string | null
  revision: number
}

export const usersProjection: Projection = {
  name: 'users',
  event_types: ['UserRegistered', 'UserConfirmed', 'EmailChanged', 'LocaleChanged', 'UserBanned', 'UserUnbanned', 'TwoFactorEnabled', 'TwoFactorDisabled'],
  async apply (event, { store, sealer }) {
    const users = store.collection<UserDoc>('users')
    const e = event as unknown as UserEvent
    const id = e.data.user_uuid
    const doc = await users.get(id)
    if (alreadyApplied(doc, event)) return
    switch (e.type) {
      case 'UserRegistered':
        await users.put({
          _id: id,
          uuid: id,
          email: (await sealer.unseal(id, e.data.email)) ?? ERASED,
          locale: e.data.locale,
          status: 'unconfirmed',
          two_factor_enabled: false,
          banned: false,
          sessions_valid_from: null,
          created_at: e.data.registered_at,
          confirmed_at: null,
          revision: event.revision
        })
        break
      case 'UserConfirmed':
        if (doc) await users.put({ ...doc, status: 'confirmed', confirmed_at: e.data.confirmed_at, revision: event.revision })
        break
      case 'EmailChanged':
        if (doc) await users.put({ ...doc, email: (await sealer.unseal(id, e.data.email)) ?? ERASED, revision: event.revision })
        break
      case 'LocaleChanged':
        if (doc) await users.put({ ...doc, locale: e.data.locale, revision: event.revision })
        break
      case 'TwoFactorEnabled':
      case 'TwoFactorDisabled':
        if (doc) await users.put({ ...doc, two_factor_enabled: e.type === 'TwoFactorEnabled', revision: event.revision })
        break
      case 'UserBanned':
        if (doc) await users.put({ ...doc, banned: true, sessions_valid_from: e.data.banned_at, revision: event.revision })
        break
      case 'UserUnbanned':
        if (doc) await users.put({ ...doc, banned: false, revision: event.revision })
        break
    }
  }
}
