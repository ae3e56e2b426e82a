import t from 'tap'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { DatabaseSync } from 'node:sqlite'
import { client } from '../support/service.ts'
import { startSvc } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'

// Crash tests: `svc serve` is killed with SIGKILL at each
// step of a submission and of its settlement (FAULT_POINT), then started again. After
// the restart every token is accounted for — captured against a completed job or
// released — and the client's retry with the same Idempotency-Key gets one job. The
// oracle is the wallet and job streams as stored, summed here.

import { crashSeed } from '../support/crash-seed.ts'

// Crash tests of the account flows: `svc serve` is killed with SIGKILL at each step of a
// confirmation's grant, of the sessions a password change ends, of an account's erasure and
// of an e-mail change, then started again; what the flow owes is there once. Apart from
// fault-injection.test.ts so that each file stays well inside the runner's 300 s.

const { cli, stop, token, owner, unconfirmed, code, erased, erasedToken, erasedUser, emailLink, sidOf, copyFor, crashUnanswered, everything } =
  await crashSeed(t)

// The flows that start at a confirmation: killed after UserConfirmed,
// the account must still get the Free plan's grant once the service runs again. The oracle:
// the wallet stream as stored (one TokensGranted `plan-free-initial` of the plan's tokens),
// and `svc audit --strict --ledger` (no flow begun and not finished; every balance the API
// shows, replayed from the wallet streams).
const CONFIRM_POINTS = ['confirm.after_confirm', 'confirm.after_grant']
for (const point of CONFIRM_POINTS) {
  t.test(`SIGKILL at ${point}: after a restart the account has its grant, once`, async t => {
    const { env, store } = copyFor(t, point)
    await crashUnanswered(
      t,
      env,
      point,
      api => api('POST', '/api/auth/confirm', { body: { email: unconfirmed.email, code } }),
      'the confirmation got no answer'
    )

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    const signedIn = await api('POST', '/api/auth/login', { body: unconfirmed })
    t.equal(signedIn.status, 200, 'the account was confirmed before the crash: its password signs in (positive control)')
    const user = (await api('GET', '/api/users/me', { token: signedIn.body.access_token })).body.uuid as string
    const grants = async (): Promise<RecordedEvent[]> =>
      (await store.readStream(`wallet-${user}`)).filter(e => e.type === 'TokensGranted' && e.data.grant_uuid === 'plan-free-initial')
    await waitUntil(async () => (await grants()).length > 0, 20_000).catch(() => undefined)
    const granted = await grants()
    t.equal(granted.length, 1, "the Free plan's grant, once")
    t.equal(granted[0]?.data.amount, 1_000, "of the plan's tokens")
    let wallet: any
    await waitUntil(async () => {
      wallet = (await api('GET', '/api/wallet', { token: signedIn.body.access_token })).body
      return wallet.balance === 1_000
    }, 10_000).catch(() => undefined)
    t.equal(wallet?.balance, 1_000, 'the wallet shows it')
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict', '--ledger'], { env, encoding: 'utf8' })
    t.equal(
      audit.status,
      0,
      `svc audit --strict --ledger: nothing begun and not finished, the ledger clean: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`
    )
  })
}

// The flow that ends sessions: killed after PasswordChanged, or after
// the first of two revocations, the other sessions open at the change must still end once
// the service runs again, the session the change was made from must stay, and a session
// started after the change must not be touched. The oracle: the session streams as stored
// (SessionStarted and SessionRevoked of the account's sessions), and `svc audit --strict`.
const SESSION_POINTS = ['sessions.after_change', 'sessions.after_revoke']
for (const point of SESSION_POINTS) {
  t.test(`SIGKILL at ${point}: after a restart every other session open at the change is revoked`, async t => {
    const { env, store } = copyFor(t, point)
    const sessionsOf = async (): Promise<{ started: string[]; revoked: Set<string> }> => {
      const all = await everything(store)
      const started = all.filter(e => e.type === 'SessionStarted' && e.data.user_uuid === owner).map(e => String(e.data.session_uuid))
      return { started, revoked: new Set(all.filter(e => e.type === 'SessionRevoked').map(e => String(e.data.session_uuid))) }
    }
    const before = await sessionsOf()
    const kept = sidOf(token)
    const others = before.started.filter(s => s !== kept && !before.revoked.has(s))
    t.equal(others.length, 2, 'two other sessions open before the change')

    await crashUnanswered(
      t,
      env,
      point,
      api =>
        api('PATCH', `/api/users/${owner}/password`, {
          token,
          body: { current_password: 'correct horse battery staple', new_password: 'an entirely new passphrase 42' }
        }),
      'the change got no answer'
    )

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    const fresh = await api('POST', '/api/auth/login', { body: { email: 'faults@example.com', password: 'an entirely new passphrase 42' } })
    t.equal(fresh.status, 200, 'the change was committed before the crash: the new password signs in (positive control)')
    let after = before
    await waitUntil(async () => {
      after = await sessionsOf()
      return others.every(s => after.revoked.has(s))
    }, 20_000).catch(() => undefined)
    t.same(
      others.filter(s => !after.revoked.has(s)),
      [],
      'every other session open at the change is revoked'
    )
    t.notOk(after.revoked.has(kept), 'the session the change was made from is not')
    t.notOk(after.revoked.has(sidOf(fresh.body.access_token)), 'nor the one started after the change')
    t.equal((await api('GET', '/api/users/me', { token })).status, 200, 'the kept session still works')
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict'], { env, encoding: 'utf8' })
    t.equal(audit.status, 0, `svc audit --strict: nothing begun and not finished: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`)
  })
}

// The flow that erases a deleted account: killed after UserDeleted or
// after any step of the erasure, the account must still end up with every credential
// ended, its address released and its data key destroyed once the service runs again (its
// sessions end with UserDeleted itself: the password signs in no more, and its access token
// reaches nothing). The oracles: the streams as stored (ApiKeyRevoked, AgentRevoked,
// WebhookEndpointDeleted, ClaimReleased of this account), keys.db read with SQLite itself
// (its data key row emptied), and `svc audit --strict`.
const DELETE_POINTS = ['delete.after_delete', ...['api_keys', 'agents', 'webhooks', 'release', 'shred'].map(s => `delete.after_${s}`)]
for (const point of DELETE_POINTS) {
  t.test(`SIGKILL at ${point}: after a restart the account is erased`, async t => {
    const { dir, env, store } = copyFor(t, point)
    await crashUnanswered(
      t,
      env,
      point,
      api => api('DELETE', `/api/users/${erasedUser}`, { token: erasedToken, body: { password: erased.password } }),
      'the deletion got no answer'
    )

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    t.equal((await api('POST', '/api/auth/login', { body: erased })).status, 401, 'the deletion was committed before the crash: the password signs in no more')
    t.equal((await api('GET', '/api/users/me', { token: erasedToken })).status, 401, 'its session reaches nothing')
    const erasure = (all: RecordedEvent[]) => ({
      key: all.some(e => e.type === 'ApiKeyRevoked' && e.data.user_uuid === erasedUser),
      agent: all.some(e => e.type === 'AgentRevoked' && e.data.user_uuid === erasedUser),
      webhook: all.some(e => e.type === 'WebhookEndpointDeleted' && e.data.user_uuid === erasedUser),
      released: all.some(e => e.type === 'ClaimReleased' && e.data.owner_uuid === erasedUser)
    })
    const shredded = (): boolean => {
      const db = new DatabaseSync(join(dir, 'keys.db'), { readOnly: true })
      try {
        const row = db.prepare('SELECT wrapped, destroyed_at FROM data_keys WHERE owner = ?').get(erasedUser) as
          | { wrapped: unknown; destroyed_at: string | null }
          | undefined
        return row !== undefined && row.wrapped === null && row.destroyed_at !== null
      } finally {
        db.close()
      }
    }
    const done = { key: true, agent: true, webhook: true, released: true }
    let seen = erasure([])
    await waitUntil(async () => {
      seen = erasure(await everything(store))
      return JSON.stringify(seen) === JSON.stringify(done) && shredded()
    }, 20_000).catch(() => undefined)
    t.same(seen, done, 'every key, agent and endpoint ended; the address released')
    t.ok(shredded(), 'the data key destroyed (keys.db)')
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict'], { env, encoding: 'utf8' })
    t.equal(audit.status, 0, `svc audit --strict: nothing begun and not finished: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`)
  })
}

// The flow that releases the previous address: killed after
// EmailChanged or after the release, the old address must be released once the service
// runs again (the link, spent by the change, cannot finish it). The oracles: the new
// address signs in (the change was committed), a ClaimReleased of this account in the
// store, and `svc audit --strict`.
const EMAIL_POINTS = ['email.after_change', 'email.after_release']
for (const point of EMAIL_POINTS) {
  t.test(`SIGKILL at ${point}: after a restart the previous address is released`, async t => {
    const { env, store } = copyFor(t, point)
    const released = async (): Promise<number> => (await everything(store)).filter(e => e.type === 'ClaimReleased' && e.data.owner_uuid === owner).length
    t.equal(await released(), 0, 'nothing of this account released before')
    await crashUnanswered(t, env, point, api => api('POST', '/api/auth/verify-email-change', { body: { token: emailLink } }), 'the verification got no answer')

    const restarted = await startSvc(t, ['serve'], env)
    const api = client(restarted.url)
    t.equal(
      (await api('POST', '/api/auth/login', { body: { email: 'moved@example.com', password: 'correct horse battery staple' } })).status,
      200,
      'the change was committed before the crash: the new address signs in (positive control)'
    )
    await waitUntil(async () => (await released()) > 0, 20_000).catch(() => undefined)
    t.equal(await released(), 1, 'the previous address released, once')
    await stop(restarted)
    const audit = spawnSync(process.execPath, [cli, 'audit', '--strict'], { env, encoding: 'utf8' })
    t.equal(audit.status, 0, `svc audit --strict: ${audit.stdout.slice(-400)}${audit.stderr.slice(-300)}`)
  })
}
