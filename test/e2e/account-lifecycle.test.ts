import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { confirmationCode, outboxMailsTo, settled, signUp, build } from '../support/service.ts'
import { JOBS, JOB_COUNTS, JOB_TOTALS } from '../../src/projections/jobs.ts'
import { API_KEYS } from '../../src/projections/api-keys.ts'
import { AGENTS } from '../../src/projections/agents.ts'
import { SESSIONS } from '../../src/projections/sessions.ts'
import { WALLETS, WALLET_TRANSACTIONS, WALLET_GROUPS, WALLET_BALANCES } from '../../src/projections/wallets.ts'
import { USAGE_DAYS, USAGE_HOURS, USAGE_SLOTS } from '../../src/projections/stats.ts'
import { NOTIFICATIONS } from '../../src/projections/notifications.ts'
import { WEBHOOKS } from '../../src/projections/webhooks.ts'
import { USERS } from '../../src/projections/users.ts'

const run = promisify(execFile)
const cli = new URL('../../src/cli.ts', import.meta.url).pathname
const { dataDir, service, api } = await build(t)
const password = 'correct horse battery staple'

t.test('five wrong passwords lock sign-in for a while (429), even with the right one', async t => {
  await signUp(api, dataDir, 'locked@example.com', password)
  for (let i = 0; i < 5; i++)
    t.equal((await api('POST', '/api/auth/login', { body: { email: 'locked@example.com', password: `wrong guess ${i}` } })).status, 401)
  const locked = await api('POST', '/api/auth/login', { body: { email: 'locked@example.com', password } })
  t.equal(locked.status, 429)
  t.equal(locked.body.code, 'login.locked')
})

t.test('svc accounts ban / unban: a banned account gets 401 everywhere', async t => {
  const token = await signUp(api, dataDir, 'banme@example.com', password)
  const key = (await api('POST', '/api/keys', { token, body: { name: 'k', environment: 'test' } })).body.raw_key
  const env = { ...process.env, DATA_DIR: dataDir }
  const banned = await run(process.execPath, [cli, 'accounts', 'ban', '--email', 'banme@example.com', '--reason', 'abuse report 7'], { env })
  t.match(JSON.parse(banned.stdout), { banned: true })
  const waitStatus = async (f: () => Promise<number>, want: number): Promise<void> => {
    for (let i = 0; i < 100 && (await f()) !== want; i++) await new Promise(resolve => setTimeout(resolve, 20))
  }
  await waitStatus(async () => (await api('GET', '/api/users/me', { token })).status, 401)
  t.equal((await api('GET', '/api/users/me', { token })).status, 401, 'session token')
  t.equal((await api('GET', '/api/wallet', { token: key })).status, 401, 'API key')
  t.equal((await api('POST', '/api/auth/login', { body: { email: 'banme@example.com', password } })).status, 401, 'sign-in')
  await run(process.execPath, [cli, 'accounts', 'unban', '--email', 'banme@example.com'], { env })
  let again = await api('POST', '/api/auth/login', { body: { email: 'banme@example.com', password } })
  for (let i = 0; i < 100 && again.status !== 200; i++) {
    await new Promise(resolve => setTimeout(resolve, 20))
    again = await api('POST', '/api/auth/login', { body: { email: 'banme@example.com', password } })
  }
  t.equal(again.status, 200, 'unbanned: signing in works')
  t.equal((await api('GET', '/api/users/me', { token: again.body.access_token })).status, 200)
  t.equal((await api('GET', '/api/users/me', { token })).status, 401, 'the session from before the ban stays revoked')
  const unknown = await run(process.execPath, [cli, 'accounts', 'ban', '--email', 'nobody@example.com'], { env }).catch(e => e)
  t.equal(unknown.code, 1)
})

t.test('delete account: erased from events and read models; the address can register again', async t => {
  const secretAddress = 'erase-me-please@example.com'
  const token = await signUp(api, dataDir, secretAddress, password)
  const me = (await api('GET', '/api/users/me', { token })).body
  const key = (await api('POST', '/api/keys', { token, body: { name: 'k', environment: 'test' } })).body.raw_key
  const agent = (await api('POST', '/api/agents', { token, body: { name: 'nightly sync', scopes: ['results:read', 'billing:read'] } })).body
  t.equal((await api('GET', '/api/wallet', { token: agent.token })).status, 200, 'the agent works before deletion')
  const job = await settled(api, key, (await api('POST', '/api/verify', { token: key, body: { email: 'my-private-contact@example.org' } })).body.uuid)
  t.equal(job.status, 'completed')
  const other = await signUp(api, dataDir, 'bystander@example.com', password)
  const otherMe = (await api('GET', '/api/users/me', { token: other })).body

  t.equal((await api('DELETE', `/api/users/${me.uuid}`, { token, body: { password: 'not the password' } })).status, 400)
  t.equal((await api('DELETE', `/api/users/${otherMe.uuid}`, { token, body: { password } })).status, 403)
  t.equal((await api('DELETE', '/api/users/01a200f4-4e74-7104-92f0-217355e415da', { token, body: { password } })).status, 404)
  t.equal((await api('DELETE', `/api/users/${me.uuid}`, { body: { password } })).status, 401)
  t.equal((await api('DELETE', `/api/users/${me.uuid}`, { token, body: { password } })).status, 204)

  t.equal((await api('GET', '/api/users/me', { token })).status, 401, 'its sessions are over')
  t.equal((await api('GET', `/api/verify/${job.uuid}`, { token: key })).status, 401, 'its keys too')
  const keyEvents = (await service.core.store.readAll({ from_position: 0, max_count: 100_000 })).filter(
    e => e.type === 'ApiKeyRevoked' && e.data.user_uuid === me.uuid
  )
  t.equal(keyEvents.length, 1, 'each key revoked with an event')
  t.equal((await api('GET', '/api/wallet', { token: agent.token })).status, 401, 'its agents too')
  const agentEvents = (await service.core.store.readAll({ from_position: 0, max_count: 100_000 })).filter(
    e => e.type === 'AgentRevoked' && e.data.user_uuid === me.uuid
  )
  t.match(
    agentEvents.map(e => e.data),
    [{ agent_uuid: agent.uuid, reason: 'account_deleted' }],
    'each agent revoked with an event'
  )

  // The access token is genuine and unexpired, its account gone: the rows that list an
  // answer for that case give it; every other operation answers 401.
  const again = await api('DELETE', `/api/users/${me.uuid}`, { token, body: { password } })
  t.equal(again.status, 400, 'DELETE again: already deleted')
  t.equal(again.body.code, 'delete_user.already_deleted')
  t.equal((await api('DELETE', `/api/users/${otherMe.uuid}`, { token, body: { password } })).status, 401, 'nothing about other accounts')
  const locale = await api('PATCH', '/api/users/me/locale', { token, body: { locale: 'fr' } })
  t.equal(locale.status, 404, 'change locale: no such user')
  t.equal(locale.body.code, 'change_locale.not_found')
  t.equal((await api('PATCH', '/api/users/me/locale', { token, body: { locale: 'xx' } })).status, 400, 'an invalid locale is still a 400')
  t.equal((await api('POST', '/api/users/me/2fa/disable', { token, body: { password, code: '123456' } })).status, 404, 'disable 2FA: no such user')
  t.equal((await api('GET', `/api/users/${me.uuid}`, { token })).status, 401)
  t.equal(
    (await api('PATCH', `/api/users/${me.uuid}/password`, { token, body: { current_password: password, new_password: 'another fine password' } })).status,
    401
  )
  const after = (await service.core.store.readAll({ from_position: 0, max_count: 100_000 })).filter(e => e.stream === `user-${me.uuid}`)
  t.equal(after[after.length - 1].type, 'UserDeleted', 'none of those appended anything to the account')
  t.equal((await api('POST', '/api/auth/login', { body: { email: secretAddress, password } })).status, 401)
  for (const spec of [
    JOBS,
    JOB_COUNTS,
    JOB_TOTALS,
    API_KEYS,
    AGENTS,
    SESSIONS,
    WALLETS,
    WALLET_TRANSACTIONS,
    WALLET_GROUPS,
    WALLET_BALANCES,
    USAGE_SLOTS,
    USAGE_HOURS,
    USAGE_DAYS,
    NOTIFICATIONS,
    WEBHOOKS
  ]) {
    t.equal(await service.core.ctx.reads.collection(spec).count({ user_uuid: me.uuid }), 0, `${spec.name} purged`)
  }
  t.equal(await service.core.ctx.reads.collection(USERS).get(me.uuid), null)

  for (const file of ['events.db', 'events.db-wal', 'keys.db', 'keys.db-wal', 'reads.db', 'reads.db-wal']) {
    const path = join(dataDir, file)
    if (!existsSync(path)) continue
    const bytes = readFileSync(path)
    t.equal(bytes.includes(Buffer.from(secretAddress)), false, `${file} holds no clear-text address of the account`)
    t.equal(bytes.includes(Buffer.from('my-private-contact@example.org')), false, `${file} holds no clear-text address it verified`)
  }

  const before = outboxMailsTo(dataDir, secretAddress).length
  t.equal((await api('POST', '/api/auth/register', { body: { email: secretAddress, password: 'a new life password', locale: 'en' } })).status, 204)
  const code = await confirmationCode(dataDir, secretAddress, before)
  const reborn = await api('POST', '/api/auth/confirm', { body: { email: secretAddress, code } })
  t.equal(reborn.status, 200, 'the address registers again')
  t.not((await api('GET', '/api/users/me', { token: reborn.body.access_token })).body.uuid, me.uuid, 'as a new account')
})

t.test('per client: 20 failed sign-ins in the window answer 429 after that', async t => {
  let status = 0
  for (let i = 0; i < 25 && status !== 429; i++)
    status = (await api('POST', '/api/auth/login', { body: { email: `nobody${i}@example.com`, password: 'whatever it is' } })).status
  t.equal(status, 429)
  const r = await api('POST', '/api/auth/login', { body: { email: 'bystander@example.com', password } })
  t.equal(r.status, 429)
  t.equal(r.body.code, 'login.too_many_attempts')
})
