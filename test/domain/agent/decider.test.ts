import t from 'tap'
import * as agent from '../../../src/domain/agent/decider.ts'
import type { AgentCommand } from '../../../src/domain/agent/decider.ts'
import type { AgentCreated, AgentRevoked, AgentsSnapshotted } from '../../../src/domain/agent/events.ts'
import type { Scope } from '../../../src/domain/api-key/scopes.ts'
import { build, spec } from '../../support/decider-spec.ts'

// The agents of one account (stream `agents-<user uuid>`). Interface section 4 "Agents":
// POST 403 "plan agent cap reached or scope not allowed for plan"; section 3 "agent usable →
// DELETE → revoked, repeat call is idempotent"; section 5.4 "a requested scope not allowed
// for the caller's plan is refused at agent creation (403)".

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'
const later = '2026-11-23T10:00:00.000Z'

// Event builders.
const created = build<AgentCreated>('AgentCreated', {
  agent_uuid: 'a1',
  user_uuid: U,
  name: 'n',
  scopes: ['results:read'],
  token_hash: 'ha1',
  token_prefix: 'sva_abcd',
  created_at: now
})
const createdAs = (id: string): AgentCreated => created({ agent_uuid: id, token_hash: `h${id}` })
const revoked = build<AgentRevoked>('AgentRevoked', { agent_uuid: 'a1', user_uuid: U, reason: 'revoked', revoked_at: now })
const snapshotted = build<AgentsSnapshotted>('AgentsSnapshotted', { user_uuid: U, usable: [], snapshotted_at: now })

// Command builders.
const create = (id: string, max = 2, allowed: readonly Scope[] = ['results:read'], scopes: Scope[] = ['results:read']): AgentCommand => ({
  type: 'CreateAgent',
  data: { ...createdAs(id).data, scopes, max_agents: max, plan_scopes: allowed }
})
const revoke = (id: string, when = now): AgentCommand => ({ type: 'RevokeAgent', data: { agent_uuid: id, reason: 'revoked', now: when } })
const revokeAll = (reason = 'account_deleted'): AgentCommand => ({ type: 'RevokeAllAgents', data: { reason, now } })

t.test("CreateAgent: the plan cap and the plan's scopes", async t => {
  const a = spec(t, agent)
  a([])
    .when(create('a1'))
    .then([createdAs('a1')], 'a first agent is created; the event carries no cap and no plan scopes')
  a([createdAs('a1')])
    .when(create('a2'))
    .then([createdAs('a2')], 'a second agent within the plan cap of two is created')
  a([createdAs('a1'), createdAs('a2')])
    .when(create('a3'))
    .thenRejects('create_agent.limit_reached', 403, 'a third agent past the plan cap of two is refused (403 "plan agent cap reached")')
  a([]).when(create('a1', 0)).thenRejects('create_agent.limit_reached', 403, 'a plan with a cap of zero allows no agent at all')
  a([])
    .when(create('a1', 2, ['email:verify:single']))
    .thenRejects('create_agent.scope_not_allowed', 403, 'a scope the plan does not allow is refused (403, interface 5.4)')
  a([])
    .when(create('a1', 2, ['results:read'], ['results:read', 'webhooks:create']))
    .thenRejects('create_agent.scope_not_allowed', 403, 'one scope outside the plan among allowed ones refuses the whole agent')
  a([])
    .when(create('a1', 2, ['results:read', 'usage:read', 'billing:read'], ['results:read', 'usage:read']))
    .then([created({ scopes: ['results:read', 'usage:read'] })], 'several scopes, all allowed by the plan: created with exactly those scopes')
  a([createdAs('a1')])
    .when(create('a1'))
    .thenRejects('create_agent.exists', 409, 'the same agent uuid is not created twice')
  a([createdAs('a1'), revoked(), createdAs('a2')])
    .when(create('a3'))
    .then([createdAs('a3')], 'a revoked agent frees its place under the cap')
  a([createdAs('a1'), createdAs('a2'), revoked({ agent_uuid: 'a2' })]).thenState(s => [...s.usable], ['a1'], 'only usable agents are counted against the cap')
})

t.test('RevokeAgent: usable → revoked, and a repeat is idempotent', async t => {
  const a = spec(t, agent)
  a([createdAs('a1')])
    .when(revoke('a1'))
    .then([revoked()], 'a usable agent is revoked')
  a([createdAs('a1'), revoked()])
    .when(revoke('a1', later))
    .thenNothing('revoking again is idempotent: nothing new, the first revoked_at stands (docs/interface.md §3)')
  a([createdAs('a1')])
    .when(revoke('a-of-another-account'))
    .thenNothing("an agent not in this account's stream is left alone (the handler answers 404)")
  a([]).when(revoke('a1')).thenNothing('an account without agents: nothing')
  a([createdAs('a1'), createdAs('a2')])
    .when(revoke('a2'))
    .then([revoked({ agent_uuid: 'a2' })], 'only the named agent is revoked')
})

t.test('RevokeAllAgents: account deletion revokes every usable agent', async t => {
  const a = spec(t, agent)
  a([createdAs('a1'), createdAs('a2'), createdAs('a3'), revoked({ agent_uuid: 'a2' })])
    .when(revokeAll())
    .then(
      [revoked({ agent_uuid: 'a1', reason: 'account_deleted' }), revoked({ agent_uuid: 'a3', reason: 'account_deleted' })],
      'each usable agent once; the revoked one is not revoked again'
    )
  a([]).when(revokeAll()).thenNothing('no agents: nothing')
  a([createdAs('a1'), revoked()])
    .when(revokeAll())
    .thenNothing('every agent revoked already: nothing')
})

t.test('snapshots: the usable agents carried forward', async t => {
  const a = spec(t, agent)
  const history = [createdAs('a1'), createdAs('a2'), revoked()]
  const snap = agent.takeSnapshot(history.reduce(agent.evolve, agent.initialState()), later)
  t.same(snap, snapshotted({ usable: ['a2'], snapshotted_at: later }), 'the snapshot holds the account and its usable agents only')
  a([snap])
    .when(create('a3'))
    .then([createdAs('a3')], 'the cap counts what the snapshot carries (one of two)')
  a([snap]).when(create('a3', 1)).thenRejects('create_agent.limit_reached', 403, 'and refuses past it')
  a([snap])
    .when(revoke('a2'))
    .then([revoked({ agent_uuid: 'a2' })], 'an agent carried forward is revoked under its account')
  a([snap]).when(revoke('a1')).thenNothing('an agent revoked before the snapshot stays revoked')
  t.equal(agent.snapshot.every, agent.SNAPSHOT_EVERY, 'a snapshot every SNAPSHOT_EVERY events')
})
