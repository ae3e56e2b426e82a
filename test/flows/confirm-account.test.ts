import t from 'tap'
import { react, type GrantState } from '../../src/flows/confirm-account/react.ts'
import type { FlowTrigger } from '../../src/eventsourcing/flow.ts'

// The reaction to a confirmation, as a specification (Emmett's workflows): given what the
// wallet and the account hold, when UserConfirmed, then the steps. The oracle: the
// interface's rule (a confirmed account holds the Free plan, its tokens granted once).

const confirmed: FlowTrigger = {
  id: 'e-1',
  type: 'UserConfirmed',
  data: { user_uuid: 'u-1', confirmed_at: '2026-11-29T00:00:00.000Z' },
  metadata: { occurred_at: '2026-11-29T00:00:00.000Z', actor: 'u-1', correlation_id: null, causation_id: null }
}
const grant = { grant_uuid: 'plan-free-initial', amount: 1_000, plan: 'free', reason: 'Free plan' }
const given = (s: Partial<GrantState>): GrantState => ({ grant, granted: false, deleted: false, ...s })

t.test('a confirmation grants the Free plan once', async t => {
  t.same(react(confirmed, given({})), [{ label: 'grant', command: { type: 'GrantPlanTokens', user_uuid: 'u-1', ...grant } }], 'not granted yet: the grant')
  t.same(react(confirmed, given({ granted: true })), [], 'granted (inline, or by an earlier delivery): nothing left')
  t.same(react(confirmed, given({ deleted: true })), [], 'the account was deleted since: nothing')
  t.same(react(confirmed, given({ grant: { ...grant, amount: 0 } })), [], 'a Free plan without tokens: nothing')
  t.same(react({ ...confirmed, type: 'UserRegistered' }, given({})), [], 'another event: nothing')
})
