import t from 'tap'
import { react } from '../../src/flows/email-change/react.ts'
import type { FlowTrigger } from '../../src/eventsourcing/flow.ts'

// The release that follows an email change, as a specification: given whether the account
// still holds the previous address's claim (and does not use it), when EmailChanged, then
// the step. The oracle: the interface's POST /api/auth/verify-email-change ("the old
// address is released": it can register again).

const changed = (data: Record<string, unknown>): FlowTrigger => ({
  id: 'e-7',
  type: 'EmailChanged',
  data: { user_uuid: 'u-1', email: 'sealed:v1:new', changed_at: '2026-11-29T10:00:00.000Z', ...data },
  metadata: { occurred_at: '2026-11-29T10:00:00.000Z', actor: 'u-1', correlation_id: null, causation_id: null }
})

t.test('a change releases the previous address while the account holds it', async t => {
  t.same(react(changed({ previous_email: 'sealed:v1:old' }), { held: true }), [
    { label: 'release', command: { type: 'ReleasePreviousEmail', user_uuid: 'u-1', previous_email: 'sealed:v1:old' } }
  ])
  t.same(react(changed({ previous_email: 'sealed:v1:old' }), { held: false }), [], 'released already, or the account uses it again: nothing')
})

t.test('nothing for an event without the previous address, or another event', async t => {
  t.same(react(changed({}), { held: true }), [], 'recorded before previous_email existed')
  t.same(react({ ...changed({ previous_email: 'sealed:v1:old' }), type: 'EmailChangeRequested' }, { held: true }), [])
})
