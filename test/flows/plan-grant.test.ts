import t from 'tap'
import { react, type PlanGrantState } from '../../src/flows/plan-change/react.ts'
import type { FlowTrigger } from '../../src/eventsourcing/flow.ts'

// The grant that follows an operator's plan change, as a specification: given the period's
// grant and the wallet, when PlanStarted or PlanChanged, then the steps. The oracle:
// docs/operations.md `svc subscription set` (one period's tokens, as an invoice would,
// unless --no-grant), and the interface's rule that a grant id grants once.

const started = (data: Record<string, unknown>): FlowTrigger => ({
  id: 'e-9',
  type: 'PlanStarted',
  data: { user_uuid: 'u-1', source: 'operator', at: '2026-11-29T10:00:00.000Z', ...data },
  metadata: { occurred_at: '2026-11-29T10:00:00.000Z', actor: 'operator:ops', correlation_id: null, causation_id: null }
})
const grant = { grant_uuid: 'operator-e-9', amount: 10_000, plan: 'starter', reason: 'Starter plan (monthly)' }
const given = (s: Partial<PlanGrantState>): PlanGrantState => ({ grant, granted: false, ...s })

t.test("an operator's change that grants: the period's tokens, once", async t => {
  t.same(react(started({ grant_period: true }), given({})), [{ label: 'grant', command: { type: 'GrantPeriodTokens', user_uuid: 'u-1', ...grant } }])
  t.same(react({ ...started({ grant_period: true }), type: 'PlanChanged' }, given({})).length, 1, 'a change of plan too')
  t.same(react(started({ grant_period: true }), given({ granted: true })), [], 'the wallet holds it: nothing')
})

t.test('no grant: without grant_period (--no-grant, Stripe), for an unknown plan, or another event', async t => {
  t.same(react(started({}), given({})), [], 'no grant_period')
  t.same(react(started({ grant_period: true }), given({ grant: null })), [], 'a plan no longer in the catalogue')
  t.same(react({ ...started({ grant_period: true }), type: 'PlanEnded' }, given({})), [], 'another event')
})
