import t from 'tap'
import { join } from 'node:path'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import type { EventStore, ReadStreamOptions, RecordedEvent } from '../../src/ports/event-store.ts'
import { defaultClockAndIds, type CommandContext } from '../../src/commands/context.ts'
import { handle, load } from '../../src/eventsourcing/command-handler.ts'
import * as wallet from '../../src/domain/wallet/decider.ts'
import * as user from '../../src/domain/user/decider.ts'
import { auditWallet } from '../../src/domain/wallet/audit.ts'
import type { WalletEvent } from '../../src/domain/wallet/events.ts'
import { testConfig } from '../support/service.ts'

// No command's cost grows with its stream's history: a
// command reads back at most one snapshot interval, whether its process has the stream
// cached or not; another process's appends are seen. Counted at the event store port.

/** An event store that counts the events its reads return. */
function counting(inner: EventStore): EventStore & { read: number } {
  const c = Object.create(inner) as EventStore & { read: number }
  c.read = 0
  c.readStream = async (stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> => {
    const events = await inner.readStream(stream, options)
    c.read += events.length
    return events
  }
  return c
}

const dir = t.testdir()
const file = join(dir, 'events.db')
const config = testConfig(dir)
const contextOn = (store: EventStore): CommandContext => ({
  store,
  reads: null as never,
  sealer: null as never,
  secrets: null as never,
  config,
  ...defaultClockAndIds(),
  base_url: () => 'http://127.0.0.1:8080'
})
const U = '01937a7e-0000-7000-8000-000000000001'
const now = (): string => new Date().toISOString()

t.test('a wallet with 5,000 events: commands read one closing of the books at most, cold or warm', async t => {
  const writer = new SqliteEventStore(file)
  const w = contextOn(writer)
  await handle(w, `wallet-${U}`, wallet, {
    type: 'GrantTokens',
    data: { user_uuid: U, grant_uuid: 'g0', amount: 1_000_000, source: 'operator', plan: null, reason: 'test', now: now() }
  })
  for (let i = 0; i < 2_500; i++) {
    await handle(w, `wallet-${U}`, wallet, {
      type: 'ReserveTokens',
      data: { user_uuid: U, job_uuid: `j${i}`, reservation_uuid: `r${i}`, amount: 3, now: now() }
    })
    await handle(w, `wallet-${U}`, wallet, {
      type: 'CaptureTokens',
      data: { user_uuid: U, job_uuid: `j${i}`, reservation_uuid: `r${i}`, amount: 3, now: now() }
    })
  }
  const all = await writer.readStream(`wallet-${U}`)
  const closings = all.filter(e => e.type === 'WalletBooksClosed').length
  t.ok(all.length > 5_000, `${all.length} events`)
  t.equal(closings, Math.floor((all.length - closings) / wallet.CLOSE_BOOKS_EVERY), 'the books were closed every CLOSE_BOOKS_EVERY events')
  const audit = auditWallet(all.map(e => ({ type: e.type, data: e.data }) as WalletEvent))
  t.same(audit.discrepancies, [], 'a replay from the first event agrees with every closing')
  t.equal(audit.state.balance, 1_000_000 - 2_500 * 3)

  // A process that has never seen the stream (a new store object: an empty cache).
  const cold = counting(new SqliteEventStore(file))
  const c = contextOn(cold)
  const r = await handle(c, `wallet-${U}`, wallet, {
    type: 'ReserveTokens',
    data: { user_uuid: U, job_uuid: 'jx', reservation_uuid: 'rx', amount: 3, now: now() }
  })
  t.equal(r.state.balance, audit.state.balance - 3, 'the state read back from the closing is the replayed one')
  t.ok(cold.read <= wallet.CLOSE_BOOKS_EVERY + 256, `a cold command read ${cold.read} events of ${all.length}`)
  cold.read = 0
  await handle(c, `wallet-${U}`, wallet, { type: 'CaptureTokens', data: { user_uuid: U, job_uuid: 'jx', reservation_uuid: 'rx', amount: 3, now: now() } })
  t.ok(cold.read <= 1, `a warm command read ${cold.read} event(s)`)

  // Another process appends: the cached state catches up with just those events.
  await handle(w, `wallet-${U}`, wallet, {
    type: 'GrantTokens',
    data: { user_uuid: U, grant_uuid: 'g1', amount: 7, source: 'operator', plan: null, reason: 'test', now: now() }
  })
  cold.read = 0
  const seen = await load(c, `wallet-${U}`, wallet)
  t.equal(seen.state.balance, audit.state.balance - 3 + 7, "the other process's grant is seen")
  t.ok(cold.read <= 2, `catching up read ${cold.read} event(s)`)
  await writer.close()
  await cold.close()
})

t.test('a user stream with 1,000 sign-in events: snapshots bound what a command reads', async t => {
  const store = counting(new SqliteEventStore(join(dir, 'users.db')))
  const c = contextOn(store)
  const stream = `user-${U}`
  await handle(c, stream, user, {
    type: 'RegisterUser',
    data: {
      user_uuid: U,
      email_sealed: 'sealed:v1:x',
      password_hash: 'h',
      locale: 'en',
      code_hash: 'c',
      code_sealed: 'sealed:v1:c',
      code_expires_at: now(),
      now: now()
    }
  })
  // 500 sign-ins: each counted before its password is judged (PasswordCheckStarted), then a success.
  for (let i = 0; i < 500; i++) {
    await handle(c, stream, user, { type: 'StartPasswordCheck', data: { operation: 'login', now: now() } })
    await handle(c, stream, user, { type: 'Login', data: { succeeded: true, now: now() } })
  }
  const all = await store.readStream(stream)
  t.ok(all.filter(e => e.type === 'UserSnapshotted').length >= 9, 'snapshots every SNAPSHOT_EVERY events')
  const fresh = counting(new SqliteEventStore(join(dir, 'users.db')))
  const loaded = await load(contextOn(fresh), stream, user)
  t.ok(fresh.read <= user.SNAPSHOT_EVERY + 1, `a cold load read ${fresh.read} of ${all.length} events`)
  const replayed = all.map(e => ({ type: e.type, data: e.data }) as Parameters<typeof user.evolve>[1]).reduce(user.evolve, user.initialState())
  t.same(loaded.state, replayed, 'the state from the snapshot equals a full replay')
  await store.close()
  await fresh.close()
})
