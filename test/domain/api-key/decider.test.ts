import t from 'tap'
import * as apikey from '../../../src/domain/api-key/decider.ts'
import type { ApiKeyCommand, Granter } from '../../../src/domain/api-key/decider.ts'
import type { ApiKeyCreated, ApiKeyRevoked, ApiKeysSnapshotted, ApiKeyUpdated } from '../../../src/domain/api-key/events.ts'
import type { CheckName } from '../../../src/domain/checks.ts'
import { build, spec } from '../../support/decider-spec.ts'

// The API keys of one account (stream `apikeys-<user uuid>`). Interface section 4 "API keys":
// POST 403 "plan key limit reached, check not allowed"; PATCH "omitted fields keep their
// value; rate limit never editable", 403 "check not allowed for plan"; DELETE "200 revoked
// key (idempotent)"; section 2: `revoked_at` "kept unchanged on repeated revocation".

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'

// Event builders.
const created = build<ApiKeyCreated>('ApiKeyCreated', {
  key_uuid: 'k1',
  user_uuid: U,
  name: 'n',
  environment: 'live',
  key_hash: 'hk1',
  key_prefix: 'svc_abcd',
  scopes: ['results:read'],
  enabled_checks: ['syntax'],
  rate_limit_per_minute: 60,
  created_at: now
})
const createdAs = (key: string): ApiKeyCreated => created({ key_uuid: key, key_hash: `h${key}` })
const revoked = build<ApiKeyRevoked>('ApiKeyRevoked', { key_uuid: 'k1', user_uuid: U, reason: 'revoked', revoked_at: now })
const updated = build<ApiKeyUpdated>('ApiKeyUpdated', { key_uuid: 'k1', user_uuid: U, updated_at: now })
const snapshotted = build<ApiKeysSnapshotted>('ApiKeysSnapshotted', { user_uuid: U, usable: [], snapshotted_at: now })

// Command builders.
const all: Granter = { scopes: ['results:read', 'webhooks:create'], enabled_checks: ['syntax', 'dns'], environment: 'live' }
const create = (key: string, max = 2, granter: Granter = all, over: Partial<ApiKeyCreated['data']> = {}): ApiKeyCommand => ({
  type: 'CreateApiKey',
  data: { ...createdAs(key).data, ...over, max_keys: max, granter }
})
const revoke = (key: string, when = now, reason = 'revoked', environment: 'live' | 'test' = 'live'): ApiKeyCommand => ({
  type: 'RevokeApiKey',
  data: { key_uuid: key, reason, environment, now: when }
})
const planChecks: readonly CheckName[] = ['syntax', 'dns', 'smtp']
const keyGranter: Granter = { scopes: ['api_keys:read'], enabled_checks: ['syntax', 'dns', 'smtp'], environment: 'live' }
const update = (
  over: { name?: string; enabled_checks?: CheckName[]; plan_checks?: readonly CheckName[]; granter?: Granter; key_uuid?: string } = {}
): ApiKeyCommand => ({ type: 'UpdateApiKey', data: { key_uuid: 'k1', plan_checks: planChecks, granter: keyGranter, now, ...over } })

t.test('CreateApiKey: the plan cap and what the creating credential holds', async t => {
  const k = spec(t, apikey)
  k([])
    .when(create('k1'))
    .then([createdAs('k1')], 'a first key is created; neither the cap nor the granter enters the event')
  k([createdAs('k1')])
    .when(create('k2'))
    .then([createdAs('k2')], 'a second key within the plan cap of two is created')
  k([createdAs('k1'), createdAs('k2')])
    .when(create('k3'))
    .thenRejects('create_api_key.limit_reached', 403, 'a third key past the plan cap of two is refused (403 "plan key limit reached")')
  k([createdAs('k1'), createdAs('k2'), revoked()])
    .when(create('k3'))
    .then([createdAs('k3')], 'a revoked key frees its place')
  k([])
    .when(create('k1', 2, { scopes: ['webhooks:create'], enabled_checks: ['syntax'], environment: 'live' }))
    .thenRejects('create_api_key.scope_not_held', 403, 'a credential cannot grant a scope it does not hold')
  k([])
    .when(create('k1', 2, { scopes: ['results:read'], enabled_checks: ['dns'], environment: 'live' }))
    .thenRejects('create_api_key.check_not_held', 403, 'a credential cannot enable a check it does not hold')
  k([])
    .when(create('k1', 2, { ...all, environment: 'test' }))
    .thenRejects('create_api_key.environment_not_held', 403, 'a test credential never mints a live key')
  k([])
    .when(create('k1', 2, { ...all, environment: 'test' }, { environment: 'test', key_prefix: 'svc_test_abcd' }))
    .then([created({ environment: 'test', key_prefix: 'svc_test_abcd' })], 'a test credential mints test keys')
  k([])
    .when(create('k1', 2, all, { environment: 'test', key_prefix: 'svc_test_abcd' }))
    .then([created({ environment: 'test', key_prefix: 'svc_test_abcd' })], 'a live credential mints both')
  k([createdAs('k1')])
    .when(create('k1'))
    .thenRejects('create_api_key.exists', 409, 'the same key uuid is not created twice')
  k([])
    .when(
      create('k1', 2, all, { environment: 'test', key_prefix: 'svc_test_abcd', scopes: ['results:read', 'webhooks:create'], enabled_checks: ['syntax', 'dns'] })
    )
    .then(
      [created({ environment: 'test', key_prefix: 'svc_test_abcd', scopes: ['results:read', 'webhooks:create'], enabled_checks: ['syntax', 'dns'] })],
      'a test-environment key with every scope and check the credential holds'
    )
  k([createdAs('k1'), created({ key_uuid: 'k2', environment: 'test' })])
    .when(create('k3'))
    .thenRejects('create_api_key.limit_reached', 403, 'test keys count against the same cap as live ones')
})

t.test('RevokeApiKey and RevokeAllApiKeys: usable → revoked, once', async t => {
  const k = spec(t, apikey)
  k([createdAs('k1')])
    .when(revoke('k1'))
    .then([revoked()], 'a usable key is revoked')
  k([createdAs('k1'), revoked()])
    .when(revoke('k1', '2027-01-01T00:00:00.000Z'))
    .thenNothing('revoking again keeps the first revoked_at (docs/interface.md §2)')
  k([createdAs('k1')])
    .when(revoke('k-of-another-account'))
    .thenNothing("another account's key is not in this stream: nothing (the handler answers 404)")
  k([createdAs('k1')])
    .when(revoke('k1', now, 'revoked', 'test'))
    .thenRejects('revoke_api_key.environment_not_held', 403, 'a test credential never revokes a live key')
  k([created({ environment: 'test' })])
    .when(revoke('k1', now, 'revoked', 'test'))
    .then([revoked()], 'it revokes a test key')
  k([createdAs('k1'), createdAs('k2'), revoked()])
    .when({ type: 'RevokeAllApiKeys', data: { reason: 'account_deleted', now } })
    .then([revoked({ key_uuid: 'k2', reason: 'account_deleted' })], 'account deletion revokes each usable key, not the revoked one again')
  k([])
    .when({ type: 'RevokeAllApiKeys', data: { reason: 'account_deleted', now } })
    .thenNothing('an account without keys: nothing')
})

t.test('UpdateApiKey: name and checks, within the plan and the credential', async t => {
  const k = spec(t, apikey)
  const key = created({ enabled_checks: ['syntax', 'dns'] })
  k([key])
    .when(update({ name: 'renamed' }))
    .then([updated({ name: 'renamed' })], 'a rename carries the name only: omitted fields keep their value')
  k([key])
    .when(update({ enabled_checks: ['syntax', 'dns'] }))
    .thenNothing('the same checks change nothing')
  k([key])
    .when(update({ enabled_checks: ['syntax', 'smtp'] }))
    .then([updated({ enabled_checks: ['syntax', 'smtp'] })], 'new checks allowed by the plan and held by the credential')
  k([key])
    .when(update({ name: 'both', enabled_checks: ['syntax'] }))
    .then([updated({ name: 'both', enabled_checks: ['syntax'] })], 'a name and checks in one event')
  k([key]).when(update()).thenNothing('neither a name nor checks: nothing')
  k([key])
    .when(update({ enabled_checks: ['catch_all'] }))
    .thenRejects('update_api_key.check_not_allowed', 403, 'a check outside the plan is refused (403 "check not allowed for plan")')
  k([key])
    .when(
      update({ enabled_checks: ['smtp'], plan_checks: ['syntax', 'dns', 'smtp'], granter: { scopes: [], enabled_checks: ['syntax'], environment: 'live' } })
    )
    .thenRejects('update_api_key.check_not_held', 403, 'a check the changing credential does not hold is refused')
  k([key, updated({ enabled_checks: ['syntax', 'smtp'] })])
    .when(update({ enabled_checks: ['syntax', 'smtp'] }))
    .thenNothing("the checks an update set are the key's checks from then on")
  // The interface lists no 409 for PATCH /api/keys/{uuid} (400, 401, 403, 404): the code is
  // asserted as it stands, the status it maps to (409) is reported, not enshrined.
  k([key, revoked()])
    .when(update({ name: 'x' }))
    .thenRejects('update_api_key.revoked', 403, 'a revoked key cannot be changed (403: the interface lists no 409 for PATCH)')
  k([key])
    .when(update({ name: 'x', granter: { ...keyGranter, environment: 'test' } }))
    .thenRejects('update_api_key.environment_not_held', 403, 'a test credential never changes a live key')
  k([])
    .when(update({ name: 'x' }))
    .thenThrows('update_api_key.revoked', "another account's key is not in this stream")
})

t.test('snapshots: the usable keys carried forward', async t => {
  const k = spec(t, apikey)
  const history = [createdAs('k1'), createdAs('k2'), revoked()]
  const snap = apikey.takeSnapshot(history.reduce(apikey.evolve, apikey.initialState()), now)
  t.same(
    snap,
    snapshotted({ usable: [{ key_uuid: 'k2', environment: 'live', scopes: ['results:read'], enabled_checks: ['syntax'] }] }),
    'the snapshot holds the usable keys only'
  )
  k([snap])
    .when(create('k3'))
    .then([createdAs('k3')], 'the cap counts what the snapshot carries')
  k([snap]).when(create('k4', 1)).thenRejects('create_api_key.limit_reached', 403, 'and refuses past it')
  k([snap])
    .when(update({ key_uuid: 'k2', enabled_checks: ['syntax'] }))
    .thenNothing('the checks carried forward are compared against')
  k([snap]).when(revoke('k1')).thenNothing('a key revoked before the snapshot stays revoked')
  t.equal(apikey.snapshot.every, apikey.SNAPSHOT_EVERY, 'a snapshot every SNAPSHOT_EVERY events')
})
