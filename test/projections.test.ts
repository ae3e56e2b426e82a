import t from 'tap'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { SqliteEventStore } from '../src/infra/eventstore/sqlite.ts'
import { MemoryReadStore } from '../src/infra/readstore/memory.ts'
import { SqliteDataKeyStore } from '../src/infra/crypto/keystore.ts'
import { Sealer } from '../src/infra/crypto/sealer.ts'
import { ProjectionRunner } from '../src/projections/runner.ts'
import { PROJECTIONS } from '../src/main.ts'
import type { WalletDoc } from '../src/projections/wallets.ts'
import type { JobDoc } from '../src/projections/jobs.ts'
import { ev } from './support/eventstore-contract.ts'

const dir = t.testdir()
const keys = new SqliteDataKeyStore(join(dir, 'keys.db'), randomBytes(32))
const sealer = new Sealer(keys)
const store = new SqliteEventStore(join(dir, 'events.db'))
t.teardown(async () => { await store.close(); await keys.close() })

const U = '01a200f4-0000-7000-8000-000000000001'
const J = '01a200f4-0000-7000-8000-000000000101'
const now = '2026-11-22T10:00:00.000Z'
await store.append(`user-${U}`, [ev('UserRegistered', { user_uuid: U, email: await sealer.seal(U, 'jane@example.com'), password_hash: 'x', locale: 'en', registered_at: now }), ev('UserConfirmed', { user_uuid: U, confirmed_at: now })], { expected_revision: 'no_stream' })
await store.append(`wallet-${U}`, [
  ev('TokensGranted', { user_uuid: U, grant_uuid: 'g', amount: 100, source: 'plan', plan: 'free', reason: 'Free plan', granted_at: now }),
  ev('TokensReserved', { user_uuid: U, job_uuid: J, amount: 3, reserved_at: now }),
  ev('TokensCaptured', { user_uuid: U, job_uuid: J, amount: 1, captured_at: now }),
  ev('TokensReleased', { user_uuid: U, job_uuid: J, amount: 2, reason: 'unused_checks', released_at: now })
], { expected_revision: 'no_stream' })
await store.append(`job-${J}`, [
  ev('JobQueued', { job_uuid: J, user_uuid: U, email: await sealer.seal(U, 'x@acme.com'), checks: ['syntax'], cost: 3, environment: 'live', key_uuid: null, queued_at: now }),
  ev('JobCompleted', { job_uuid: J, user_uuid: U, verdict: 'valid', reason: 'accepted_email', score: 100, charge: 1, result: { normalized: await sealer.seal(U, 'x@acme.com') }, completed_at: now })
], { expected_revision: 'no_stream' })

t.test('every projection applied twice to every event gives the same read models', async t => {
  const once = new MemoryReadStore()
  const twice = new MemoryReadStore()
  const events = await store.readAll({ from_position: 0, max_count: 1000 })
  for (const e of events) {
    for (const p of PROJECTIONS) {
      if (!p.event_types.includes(e.type)) continue
      await p.apply(e, { store: once, sealer })
      await p.apply(e, { store: twice, sealer })
      await p.apply(e, { store: twice, sealer })
    }
  }
  for (const name of ['users', 'wallets', 'wallet_transactions', 'jobs', 'api_keys']) {
    t.same(await twice.collection(name).find({}), await once.collection(name).find({}), name)
  }
  const w = await once.collection<WalletDoc>('wallets').get(U)
  t.match(w, { balance: 99, reserved: 0, spent: 1, granted: 100 })
  t.equal((await once.collection('wallet_transactions').find({ user_uuid: U })).total, 4, 'one ledger entry per wallet event')
  const job = await once.collection<JobDoc>('jobs').get(J)
  t.match(job, { email: 'x@acme.com', status: 'completed', verdict: 'valid', result: { normalized: 'x@acme.com' } })
})

t.test('the runner rebuilds from the store, keeps per-projection checkpoints and answers waitFor', async t => {
  const reads = new MemoryReadStore()
  const runner = new ProjectionRunner(store, PROJECTIONS, { store: reads, sealer })
  await runner.start()
  t.teardown(() => runner.stop())
  const head = await store.headPosition()
  t.equal(runner.position, head)
  for (const p of PROJECTIONS) t.equal(await reads.getCheckpoint(p.name), head, `${p.name} checkpoint`)
  const r = await store.append(`wallet-${U}`, [ev('TokensGranted', { user_uuid: U, grant_uuid: 'g2', amount: 5, source: 'operator', plan: null, reason: 'x', granted_at: now })], { expected_revision: 3 })
  t.equal(await runner.waitFor(r.position), true)
  t.equal((await reads.collection<WalletDoc>('wallets').get(U))?.balance, 104, 'read your writes')
  t.equal(await runner.waitFor(r.position + 1000, 50), false, 'bounded wait')
})

t.test('crypto-shredding: a destroyed key leaves the address unreadable', async t => {
  const other = '01a200f4-0000-7000-8000-0000000000ff'
  const sealed = await sealer.seal(other, 'gone@example.com')
  t.notMatch(sealed, /gone/)
  t.equal(await sealer.unseal(other, sealed), 'gone@example.com')
  await keys.destroy(other)
  t.equal(await sealer.unseal(other, sealed), null)
  await t.rejects(sealer.seal(other, 'again@example.com'), { name: 'DataKeyDestroyedError' })
})
