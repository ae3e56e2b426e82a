// The KurrentDB adapter's subscription and reads, driven through the client's own
// `Subscription` stream class and its own event conversion, over the protocol's real
// messages (`ReadResp` from the client's generated protobuf code), as a server would send
// them: events, then a checkpoint and a caught-up signal while a slow handler still holds
// earlier events. Only the gRPC call is replaced, by an object stream the test writes to.
// `readAll` goes through the client's native bridge in this version (an async generator of
// converted events): the fake yields the same events. No KurrentDB server can run here
// (see test/infra/eventstore/kurrentdb.test.ts).
import t from 'tap'
import { createRequire } from 'node:module'
import { PassThrough } from 'node:stream'
import { randomUUID } from 'node:crypto'
import {
  FORWARDS,
  MaxAppendSizeExceededError,
  UnavailableError,
  CancelledError,
  DeadlineExceededError,
  NotLeaderError,
  AccessDeniedError,
  type Position
} from '@kurrent/kurrentdb-client'
import { KurrentEventStore, currentScheme, isTransient, type KurrentClient } from '../../../src/infra/eventstore/kurrentdb.ts'
import { waitUntil } from '../../support/eventstore-contract.ts'
import { AppendTooLargeError } from '../../../src/ports/event-store.ts'

const require = createRequire(import.meta.url)
const { Subscription } = require('@kurrent/kurrentdb-client/dist/streams/utils/Subscription.js')
const { convertGrpcEvent } = require('@kurrent/kurrentdb-client/dist/utils/convertGrpcEvent.js')
const { ReadResp } = require('@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb.js')
const { UUID, StreamIdentifier } = require('@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb.js')
// gRPC's own metadata class, as the client resolves it.
const { Metadata } = createRequire(require.resolve('@kurrent/kurrentdb-client'))('@grpc/grpc-js')

type Message = InstanceType<typeof ReadResp>

/** A `ReadResp` carrying one recorded event at commit position `pos`. */
function eventMsg(pos: number, type: string, stream = 'job-1'): Message {
  const rec = new ReadResp.ReadEvent.RecordedEvent()
  rec.setId(new UUID().setString(randomUUID()))
  rec.setStreamIdentifier(new StreamIdentifier().setStreamName(Buffer.from(stream)))
  rec.setStreamRevision(String(pos))
  rec.setPreparePosition(String(pos))
  rec.setCommitPosition(String(pos))
  rec
    .getMetadataMap()
    .set('type', type)
    .set('content-type', 'application/json')
    .set('created', String(BigInt(Date.now()) * 10_000n))
  rec.setCustomMetadata(Buffer.from(JSON.stringify({ occurred_at: new Date().toISOString() })))
  rec.setData(Buffer.from(JSON.stringify({ pos, pad: 'x'.repeat(90) })))
  const read = new ReadResp.ReadEvent()
  read.setEvent(rec)
  read.setCommitPosition(String(pos))
  return new ReadResp().setEvent(read)
}
const systemMsg = (pos: number): Message => eventMsg(pos, '$metadata', '$$job-1')
const checkpointMsg = (pos: number): Message =>
  new ReadResp().setCheckpoint(new ReadResp.Checkpoint().setCommitPosition(String(pos)).setPreparePosition(String(pos)))
const caughtUpMsg = (): Message => new ReadResp().setCaughtUp(new ReadResp.CaughtUp())

/** The gRPC call as the client sees it: an object stream of messages, with `cancel()`. */
class FakeCall extends PassThrough {
  cancelled = false
  constructor() {
    super({ objectMode: true })
  }
  cancel(): void {
    this.cancelled = true
    // What @grpc/grpc-js does on a client cancel (the client's streams ignore this error).
    this.emit('error', Object.assign(new Error('1 CANCELLED: Cancelled on client'), { code: 1, details: 'Cancelled on client', metadata: null }))
  }

  /** A server-side failure with a gRPC status code (14 UNAVAILABLE, 16 UNAUTHENTICATED, …), as @grpc/grpc-js reports it. */
  fail(code: number, details: string): void {
    this.emit('error', Object.assign(new Error(`${code} ${details}`), { code, details, metadata: new Metadata() }))
  }
}

/** The client, as far as the adapter uses it: subscriptions and reads over fake calls. */
class FakeClient implements KurrentClient {
  readonly subscriptions: Array<{ from: Position | 'start' | 'end'; call: FakeCall }> = []
  log: Message[] = []
  subscribeToAll = ((options: { fromPosition?: Position | 'start' | 'end'; filter?: { checkpointReached?: unknown; regex?: string } }) => {
    const call = new FakeCall()
    this.subscriptions.push({ from: options.fromPosition ?? 'start', call })
    return new Subscription(async () => call, convertGrpcEvent, {}, options.filter?.checkpointReached)
  }) as unknown as KurrentClient['subscribeToAll']

  /** Reads left before their end (the adapter returned the generator): each would stay open on a server. */
  readsReturned = 0
  /** Each read's `maxCount` (undefined: unbounded). */
  readCounts: Array<number | bigint | undefined> = []
  readAll = ((options: { fromPosition?: Position | 'start' | 'end'; direction?: string; maxCount?: number | bigint }) => {
    const at = (m: Message): number => Number(m.getEvent().getCommitPosition())
    const from = options.fromPosition
    this.readCounts.push(options.maxCount)
    // As the server reads from a position: that position included, either way.
    const all =
      options.direction === FORWARDS || options.direction === undefined
        ? this.log.filter(m => typeof from !== 'object' || at(m) >= Number(from.commit))
        : [...this.log].reverse().filter(m => typeof from !== 'object' || at(m) <= Number(from.commit))
    const msgs = options.maxCount === undefined ? all : all.slice(0, Number(options.maxCount))
    const client = this
    return (async function* () {
      let done = false
      try {
        for (const m of msgs) yield convertGrpcEvent(m.getEvent())
        done = true
      } finally {
        if (!done) client.readsReturned++
      }
    })()
  }) as unknown as KurrentClient['readAll']

  appendToStream = (async () => {
    throw new Error('not used')
  }) as unknown as KurrentClient['appendToStream']
  readStream = (() => {
    throw new Error('not used')
  }) as unknown as KurrentClient['readStream']
  dispose = async (): Promise<void> => {}
}

const open = (client: FakeClient, logged: unknown[] = []): KurrentEventStore =>
  new KurrentEventStore(client, {
    retry_min_ms: 10,
    retry_max_ms: 40,
    log: (_m, err) => {
      logged.push(err)
    }
  })

t.test(
  'a checkpoint and the caught-up signal arriving while a slow handler holds earlier events: every event once, in order, nothing ahead of the handler',
  async t => {
    const client = new FakeClient()
    const store = open(client)
    t.teardown(() => store.close())
    const trace: string[] = []
    let release: () => void = () => {}
    let gate = new Promise<void>(resolve => {
      release = resolve
    })
    const sub = store.subscribeToAll(
      {
        from_position: 0,
        event_types: ['JobQueued'],
        on_checkpoint: p => {
          trace.push(`checkpoint ${p}`)
        },
        on_caught_up: p => {
          trace.push(`caught up ${p}`)
        }
      },
      async e => {
        trace.push(`handle ${e.position}`)
        await gate
      }
    )
    t.teardown(() => sub.stop())
    await waitUntil(() => client.subscriptions.length === 1)
    const { call } = client.subscriptions[0]
    // The server's burst: five events, a system event, one of a type nobody asked for, a checkpoint past them all, caught up.
    for (const m of [
      eventMsg(10, 'JobQueued'),
      eventMsg(20, 'JobQueued'),
      eventMsg(30, 'JobQueued'),
      eventMsg(40, 'JobQueued'),
      eventMsg(50, 'JobQueued'),
      systemMsg(55),
      eventMsg(60, 'WalletOpened'),
      checkpointMsg(90),
      caughtUpMsg()
    ])
      call.write(m)
    await waitUntil(() => trace.length > 0)
    // Let the client's stream take in the whole burst while the first event is still being handled.
    await new Promise(resolve => setImmediate(resolve))
    t.same(trace, ['handle 10'], 'the handler holds the first event; no checkpoint and no caught-up yet')
    release()
    gate = Promise.resolve()
    await waitUntil(() => trace.includes('caught up 90'))
    t.same(trace, [
      'handle 10',
      'checkpoint 10',
      'handle 20',
      'checkpoint 20',
      'handle 30',
      'checkpoint 30',
      'handle 40',
      'checkpoint 40',
      'handle 50',
      'checkpoint 50',
      'checkpoint 60', // the event of another type: skipped, and its position reached (read-your-writes)
      'checkpoint 90', // the server's checkpoint, after everything received before it
      'caught up 90'
    ])
    // Live: an event, then a checkpoint for events the server's filter left out.
    call.write(eventMsg(100, 'JobQueued'))
    call.write(checkpointMsg(130))
    await waitUntil(() => trace.includes('checkpoint 130'))
    t.same(trace.slice(13), ['handle 100', 'checkpoint 100', 'checkpoint 130'])
    t.equal(client.subscriptions.length, 1, 'one subscription all along')
  }
)

t.test('a dropped subscription (UNAVAILABLE) is cancelled and made again from the last handled event; a replayed event is not handled twice', async t => {
  const client = new FakeClient()
  const logged: unknown[] = []
  const store = open(client, logged)
  t.teardown(() => store.close())
  const handled: number[] = []
  const errors: unknown[] = []
  const sub = store.subscribeToAll(
    { from_position: 0 },
    e => {
      handled.push(e.position)
    },
    err => {
      errors.push(err)
    }
  )
  t.teardown(() => sub.stop())
  await waitUntil(() => client.subscriptions.length === 1)
  const first = client.subscriptions[0].call
  first.write(eventMsg(10, 'A'))
  first.write(eventMsg(20, 'A'))
  await waitUntil(() => handled.length === 2)
  first.fail(14, 'Connection dropped')
  await waitUntil(() => client.subscriptions.length === 2)
  t.ok(first.cancelled, 'the old call was cancelled')
  t.same(client.subscriptions[1].from, { commit: 20n, prepare: 20n }, 'resubscribed after the last handled event')
  const second = client.subscriptions[1].call
  second.write(eventMsg(20, 'A'))
  second.write(eventMsg(30, 'A'))
  await waitUntil(() => handled.length === 3)
  t.same(handled, [10, 20, 30])
  t.same(errors, [], 'not reported as a failure')
  t.same(logged, [], 'a transient error is not logged')
})

t.test('an error that is not transient (UNAUTHENTICATED) is logged and the subscription made again; it does not stop for good', async t => {
  const client = new FakeClient()
  const logged: unknown[] = []
  const store = open(client, logged)
  t.teardown(() => store.close())
  const errors: unknown[] = []
  const sub = store.subscribeToAll(
    { from_position: 0 },
    () => {},
    err => {
      errors.push(err)
    }
  )
  t.teardown(() => sub.stop())
  await waitUntil(() => client.subscriptions.length === 1)
  client.subscriptions[0].call.fail(16, 'Access denied')
  await waitUntil(() => client.subscriptions.length === 2)
  t.equal(logged.length, 1)
  t.ok(logged[0] instanceof AccessDeniedError, 'classified by the client as AccessDeniedError')
  t.same(errors, [])
})

t.test('a handler error stops the subscription and is reported, never retried', async t => {
  const client = new FakeClient()
  const store = open(client)
  t.teardown(() => store.close())
  let reported: unknown = null
  let calls = 0
  // A message that mentions a closed connection must not pass for a dropped subscription.
  store.subscribeToAll(
    { from_position: 0 },
    () => {
      calls++
      throw new Error('connection closed by the projection')
    },
    err => {
      reported = err
    }
  )
  await waitUntil(() => client.subscriptions.length === 1)
  const { call } = client.subscriptions[0]
  call.write(eventMsg(10, 'A'))
  call.write(eventMsg(20, 'A'))
  await waitUntil(() => reported !== null)
  t.match(String(reported), /connection closed by the projection/)
  t.equal(calls, 1)
  t.ok(call.cancelled, 'the call was cancelled')
  // Positive control for the absence below: a second subscription on the same client is made and served.
  const seen: number[] = []
  const control = store.subscribeToAll({ from_position: 0 }, e => {
    seen.push(e.position)
  })
  await waitUntil(() => client.subscriptions.length === 2)
  client.subscriptions[1].call.write(eventMsg(10, 'A'))
  await waitUntil(() => seen.length === 1)
  await control.stop()
  t.equal(client.subscriptions.length, 2, 'the failed subscription was not made again')
})

t.test('stop() during the pause before resubscribing returns without waiting for it, and nothing is made again', async t => {
  const client = new FakeClient()
  // A pause far longer than the test's timeout: stop() must not wait for it.
  const store = new KurrentEventStore(client, { retry_min_ms: 600_000, retry_max_ms: 600_000, log: () => {} })
  t.teardown(() => store.close())
  const sub = store.subscribeToAll({ from_position: 0 }, () => {})
  await waitUntil(() => client.subscriptions.length === 1)
  const { call } = client.subscriptions[0]
  call.fail(14, 'Connection dropped')
  await waitUntil(() => call.cancelled)
  await sub.stop()
  t.equal(client.subscriptions.length, 1)
})

t.test('stop() while the subscription waits for the next message ends it', async t => {
  const client = new FakeClient()
  const store = open(client)
  const handled: number[] = []
  const sub = store.subscribeToAll({ from_position: 0 }, e => {
    handled.push(e.position)
  })
  await waitUntil(() => client.subscriptions.length === 1)
  client.subscriptions[0].call.write(eventMsg(10, 'A'))
  await waitUntil(() => handled.length === 1)
  await sub.stop()
  await store.close()
  t.same(handled, [10])
})

t.test('readAll: system events do not end a page early; pages are bounded by bytes; the head skips any number of system events', async t => {
  const client = new FakeClient()
  const store = open(client)
  t.teardown(() => store.close())
  client.log = [eventMsg(10, 'A'), ...Array.from({ length: 100 }, (_, i) => systemMsg(11 + i)), eventMsg(200, 'B'), eventMsg(210, 'C'), eventMsg(220, 'D')]
  const page = await store.readAll({ from_position: 0, max_count: 2 })
  t.same(
    page.map(e => e.position),
    [10, 200],
    'two of ours across a hundred system events'
  )
  t.same(
    (await store.readAll({ from_position: 200, max_count: 10 })).map(e => e.type),
    ['C', 'D'],
    'exclusive start'
  )
  const size = JSON.stringify({ pos: 10, pad: 'x'.repeat(90) }).length
  t.equal(page[0].size, size, 'events carry the size of their data')
  t.same(
    (await store.readAll({ from_position: 0, max_count: 10, max_bytes: size * 2 })).map(e => e.position),
    [10, 200],
    'at most max_bytes of data'
  )
  t.same(
    (await store.readAll({ from_position: 0, max_count: 10, max_bytes: 1 })).map(e => e.position),
    [10],
    'one event at least'
  )
  t.equal(await store.headPosition(), 220)
  t.equal(client.readsReturned, 0, 'every read was read to its end (none stays open on the server)')
  t.ok(
    client.readCounts.every(n => n !== undefined && Number(n) <= 1_000),
    `every read bounded by maxCount (${client.readCounts.length} reads)`
  )
  client.log = [eventMsg(10, 'A'), ...Array.from({ length: 100 }, (_, i) => systemMsg(11 + i))]
  t.equal(await store.headPosition(), 10, 'a hundred trailing system events (more than one read of 64) are passed over')
  client.log = []
  t.equal(await store.headPosition(), 0)
})

t.test('positions are byte offsets: countAfter counts events; a page of 2,500 across bounded reads', async t => {
  const client = new FakeClient()
  const store = open(client)
  t.teardown(() => store.close())
  // 2,500 of ours at positions 300 bytes apart, a system event after every tenth.
  client.log = Array.from({ length: 2_500 }, (_, i) => [eventMsg(1_000 + i * 300, 'E'), ...(i % 10 === 9 ? [systemMsg(1_000 + i * 300 + 150)] : [])]).flat()
  const last = 1_000 + 2_499 * 300
  t.equal(await store.countAfter(0, 10_000), 2_500, 'all 2,500 events counted, not 750,000 bytes of positions')
  t.equal(await store.countAfter(1_000 + 99 * 300, 10_000), 2_400, 'after the 100th: 2,400')
  t.equal(await store.countAfter(0, 1_000), 1_000, 'counted up to the cap')
  t.equal(await store.countAfter(last, 10), 0, 'none after the head')
  const all = await store.readAll({ from_position: 0, max_count: 2_500 })
  t.equal(all.length, 2_500, 'a page of 2,500 across three reads')
  t.ok(
    all.every((e, i) => i === 0 || e.position > all[i - 1].position),
    'in order, none twice'
  )
  t.equal(client.readsReturned, 0, 'every read read to its end')
})

t.test("an append over the server's MaxAppendSize is AppendTooLargeError (the API's 413), nothing else", async t => {
  const client = new FakeClient()
  client.appendToStream = (async () => {
    throw new MaxAppendSizeExceededError(undefined as never, 1_048_576)
  }) as unknown as KurrentClient['appendToStream']
  const store = open(client)
  t.teardown(() => store.close())
  const refused = await store
    .append('batch-1', [{ type: 'BatchItemsAdded', data: {}, metadata: { occurred_at: new Date().toISOString() } }], { expected_revision: 'any' })
    .catch((e: unknown) => e)
  t.ok(refused instanceof AppendTooLargeError, 'mapped')
  t.match(refused, { stream: 'batch-1', limit_bytes: 1_048_576 })
})

t.test("errors are classified with the client's classes; esdb:// is taken in the current scheme", async t => {
  const svc = (code: number): Error => Object.assign(new Error('x'), { code, details: 'x', metadata: new Metadata() })
  for (const E of [UnavailableError, CancelledError, DeadlineExceededError]) t.ok(isTransient(new E(svc(14) as never)), E.name)
  const leader = new Metadata()
  leader.set('leader-endpoint-host', 'node2')
  leader.set('leader-endpoint-port', '2113')
  t.ok(isTransient(new NotLeaderError(Object.assign(svc(5), { metadata: leader }) as never)), 'NotLeaderError')
  t.notOk(isTransient(new AccessDeniedError(svc(16) as never)), 'AccessDeniedError is not')
  t.notOk(isTransient(new Error('connection closed')), 'a message is not a class')
  t.equal(currentScheme('esdb://admin:pw@kurrentdb:2113?tls=true'), 'kurrentdb://admin:pw@kurrentdb:2113?tls=true')
  t.equal(currentScheme('esdb+discover://cluster.local:2113'), 'kurrentdb+discover://cluster.local:2113')
  t.equal(currentScheme('kurrentdb://h:2113'), 'kurrentdb://h:2113')
})

t.test('beside EventStoreDB the relay keeps its position in the read store, never as an event', async t => {
  const { loadConfig } = await import('../../../src/config.ts')
  const { openCore } = await import('../../../src/core.ts')
  // Nothing answers on this port: any use of the event store would fail (the client connects lazily).
  const core = await openCore(loadConfig({ DATA_DIR: t.testdir(), EVENTSTORE_URL: 'kurrentdb://127.0.0.1:1?tls=false' }))
  t.teardown(() => core.close())
  t.ok(core.store instanceof KurrentEventStore)
  await core.checkpoints.setCheckpoint('relay', 1234)
  t.equal(await core.checkpoints.getCheckpoint('relay'), 1234)
  t.equal(await core.ctx.reads.getConsumerCheckpoint('relay'), 1234, "in the read store's consumer checkpoints")
})
