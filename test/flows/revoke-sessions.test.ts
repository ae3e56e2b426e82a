import t from 'tap'
import { react, type OpenSessions } from '../../src/flows/revoke-sessions/react.ts'
import type { FlowTrigger } from '../../src/eventsourcing/flow.ts'

// The reaction to a change of password or factors, or a ban, as a specification: given the
// account's sessions still active, when the event, then the revocations. The oracle: ASVS
// 5.0 V7.4.3 (a change of credentials ends the other sessions) and the interface's
// PATCH /api/users/{uuid}/password ("revokes every other session").

const AT = '2026-11-29T10:00:00.000Z'
const meta = { occurred_at: AT, actor: 'u-1', correlation_id: null, causation_id: null }
const trigger = (type: string, data: Record<string, unknown>): FlowTrigger => ({ id: 'e-1', type, data: { user_uuid: 'u-1', ...data }, metadata: meta })
const given = (...open: Array<[string, string]>): OpenSessions => ({ open: open.map(([session_uuid, started_at]) => ({ session_uuid, started_at })) })
const revoked = (...uuids: string[]) => uuids.map(session_uuid => ({ label: 'revoke', command: { type: 'RevokeSession', session_uuid } }))

const before = '2026-11-29T09:00:00.000Z'
const after = '2026-11-29T10:00:00.001Z'

t.test('a password change ends every other session open at the change', async t => {
  const changed = trigger('PasswordChanged', { reason: 'change', changed_at: AT, kept_session_uuid: 's-mine' })
  t.same(react(changed, given(['s-mine', before], ['s-a', before], ['s-b', AT])), revoked('s-a', 's-b'), 'the others, the one of that instant too')
  t.same(react(changed, given(['s-mine', before])), [], 'only the kept one left: nothing')
  t.same(react(changed, given(['s-new', after])), [], 'a session started after the change (a late run): left alone')
})

t.test('a reset and a ban end every session; events recorded before kept_session_uuid existed keep none', async t => {
  t.same(react(trigger('PasswordChanged', { reason: 'reset', changed_at: AT, kept_session_uuid: null }), given(['s-a', before])), revoked('s-a'))
  t.same(react(trigger('PasswordChanged', { reason: 'change', changed_at: AT }), given(['s-a', before])), revoked('s-a'), 'an older event')
  t.same(react(trigger('UserBanned', { banned_at: AT, reason: 'abuse' }), given(['s-a', before], ['s-b', after])), revoked('s-a'), 'a ban: those open then')
})

t.test('a change of factors ends the other sessions', async t => {
  t.same(
    react(trigger('TwoFactorEnabled', { enabled_at: AT, time_step: 1, kept_session_uuid: 's-mine' }), given(['s-mine', before], ['s-a', before])),
    revoked('s-a')
  )
  t.same(react(trigger('TwoFactorDisabled', { disabled_at: AT, kept_session_uuid: 's-mine' }), given(['s-mine', before], ['s-a', before])), revoked('s-a'))
})

t.test('another event: nothing', async t => {
  t.same(react(trigger('LocaleChanged', { changed_at: AT, locale: 'fr' }), given(['s-a', before])), [])
})
