// Operations tested without a port (test/support/command-spec.ts): given events on their
// streams, when an operation runs on the service's own write side, then the new events per
// stream. The oracles: the plan catalogue's file for the plan's numbers, the interface's
// error codes, and the events the given streams already hold.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createApiKey } from '../../src/commands/api-key/create-api-key.ts'
import { revokeApiKey } from '../../src/commands/api-key/revoke-api-key.ts'
import { changeLocale } from '../../src/commands/user/change-locale.ts'
import { markNotificationsSeen } from '../../src/commands/notification/mark-notifications-seen.ts'
import { commandSpec } from '../support/command-spec.ts'

const OWNER = '01a30000-0000-7000-8000-000000000001'
const KEY = '01a30000-0000-7000-8000-0000000000a1'
const catalogue = JSON.parse(readFileSync(new URL('../../config/plans.json', import.meta.url), 'utf8')) as {
  plans: Array<{ name: string; rate_limit_per_minute: number }>
}
const FREE = catalogue.plans.find(p => p.name === 'Free')!

const created = {
  type: 'ApiKeyCreated',
  data: {
    key_uuid: KEY,
    user_uuid: OWNER,
    name: 'sealed name',
    environment: 'live',
    key_hash: 'ab'.repeat(32),
    key_prefix: 'svc_AbCd',
    scopes: ['email:verify:single'],
    enabled_checks: ['syntax'],
    rate_limit_per_minute: FREE.rate_limit_per_minute,
    created_at: '2026-11-28T10:00:00.000Z'
  }
}
const granter = { environment: 'live' as const, scopes: ['email:verify:single', 'results:read'], enabled_checks: ['syntax', 'mx'] }

t.test("createApiKey: a key on the account's apikeys stream, seeded from its plan (Free without a subscription)", async t => {
  const made = await commandSpec(t)
    .given({})
    .when(async ctx => await createApiKey(ctx, { user_uuid: OWNER, name: 'ci', environment: 'live', granter: granter as never, actor: OWNER }))
    .then({
      [`apikeys-${OWNER}`]: [
        {
          type: 'ApiKeyCreated',
          data: { user_uuid: OWNER, environment: 'live', scopes: ['email:verify:single', 'results:read'], rate_limit_per_minute: FREE.rate_limit_per_minute }
        }
      ]
    })
  t.match(made.raw_key, /^svc_[A-Za-z0-9_-]{43}$/, 'the raw key is returned once')
})

t.test('createApiKey: a name of 101 characters is refused, and nothing is written', async t => {
  await commandSpec(t)
    .given({})
    .when(async ctx => await createApiKey(ctx, { user_uuid: OWNER, name: 'x'.repeat(101), environment: 'live', granter: granter as never, actor: OWNER }))
    .thenThrows('create_api_key.invalid_name')
})

t.test('revokeApiKey: once revoked, a key is revoked again by nothing', async t => {
  await commandSpec(t)
    .given({ [`apikeys-${OWNER}`]: [created] })
    .when(async ctx => await revokeApiKey(ctx, OWNER, KEY, { environment: 'live' }, 'leaked', OWNER))
    .then({ [`apikeys-${OWNER}`]: [{ type: 'ApiKeyRevoked', data: { key_uuid: KEY, user_uuid: OWNER, reason: 'leaked' } }] })
  await commandSpec(t)
    .given({
      [`apikeys-${OWNER}`]: [
        created,
        { type: 'ApiKeyRevoked', data: { key_uuid: KEY, user_uuid: OWNER, reason: 'leaked', revoked_at: '2026-11-28T11:00:00.000Z' } }
      ]
    })
    .when(async ctx => await revokeApiKey(ctx, OWNER, KEY, { environment: 'live' }, 'again', OWNER))
    .then({}, 'a second revocation')
})

t.test('revokeApiKey: a test credential cannot revoke a live key', async t => {
  await commandSpec(t)
    .given({ [`apikeys-${OWNER}`]: [created] })
    .when(async ctx => await revokeApiKey(ctx, OWNER, KEY, { environment: 'test' }, 'by a test key', OWNER))
    .thenThrows('revoke_api_key.environment_not_held')
})

t.test('changeLocale refuses a locale the console does not speak before reading anything', async t => {
  await commandSpec(t)
    .given({})
    .when(async ctx => await changeLocale(ctx, OWNER, 'xx'))
    .thenThrows('change_locale.invalid_locale')
})

t.test('markNotificationsSeen: the cursor moves forward on the notifications stream', async t => {
  const r = await commandSpec(t)
    .given({})
    .when(async ctx => await markNotificationsSeen(ctx, OWNER, 42))
    .then({ [`notifications-${OWNER}`]: [{ type: 'NotificationsSeen', data: { user_uuid: OWNER, up_to: 42 } }] })
  t.equal(r.seen_up_to, 42)
})

t.test('the specification fails when the events differ (a recorder in place of the test)', async t => {
  const { isDeepStrictEqual } = await import('node:util')
  const failed: string[] = []
  const recorder = {
    testdir: () => t.testdir(),
    teardown: (f: () => unknown) => t.teardown(f),
    same: (a: unknown, b: unknown, message: string) => {
      if (!isDeepStrictEqual(a, b)) failed.push(message)
    },
    match: () => {},
    rejects: async () => {}
  }
  await commandSpec(recorder as never)
    .given({})
    .when(async ctx => await markNotificationsSeen(ctx, OWNER, 7))
    .then({ [`notifications-${OWNER}`]: [{ type: 'ApiKeyRevoked' }] }, 'wrong type')
  await commandSpec(recorder as never)
    .given({})
    .when(async ctx => await markNotificationsSeen(ctx, OWNER, 7))
    .then({ [`apikeys-${OWNER}`]: [{ type: 'NotificationsSeen' }] }, 'wrong stream')
  t.same(failed, [`wrong type: notifications-${OWNER}`, 'wrong stream: these streams and no other', `wrong stream: apikeys-${OWNER}`])
})
