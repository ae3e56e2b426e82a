import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { WrongExpectedRevisionError, type EventStore, type NewEvent, type RecordedEvent } from '../../src/ports/event-store.ts'

/** Builds an event for contract tests. */
export function ev(type: string, data: Record<string, unknown> = {}): NewEvent {
  return { id: randomUUID(), type, data, metadata: { occurred_at: new Date().toISOString() } }
}

export interface EventStoreFactory {
  /** A new store (a fresh database, or a fresh stream prefix on a shared server). */
  open(): Promise<EventStore>
  /** A second connection to the same database as `store`. */
  reopen(store: EventStore): Promise<EventStore>
}

/**
 * The contract every EventStore adapter passes (docs/design/architecture.md "Ports and their adapters").
 * Streams are prefixed with a random id so the suite can run against a shared server.
 */
export function eventStoreContract(t: Test, factory: EventStoreFactory): void {
  const p = (): string => `contract_${randomUUID().replaceAll('-', '')}`

  t.test('append no_stream then exact revision; read back in order', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const s = `${p()}-1`
    const r1 = await store.append(s, [ev('A', { n: 1 }), ev('B', { n: 2 })], { expected_revision: 'no_stream' })
    t.equal(r1.next_expected_revision, 1)
    const r2 = await store.append(s, [ev('C', { n: 3 })], { expected_revision: 1 })
    t.equal(r2.next_expected_revision, 2)
    t.ok(r2.position > r1.position, 'global position grows')
    const events = await store.readStream(s)
    t.same(
      events.map(e => [e.type, e.revision, e.data.n]),
      [
        ['A', 0, 1],
        ['B', 1, 2],
        ['C', 2, 3]
      ]
    )
    t.equal(events[0].stream, s)
    t.type(events[0].metadata.occurred_at, 'string')
  })

  t.test('expected revision violations raise WrongExpectedRevisionError and append nothing', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const s = `${p()}-1`
    await store.append(s, [ev('A')], { expected_revision: 'no_stream' })
    await t.rejects(store.append(s, [ev('B')], { expected_revision: 'no_stream' }), WrongExpectedRevisionError)
    await t.rejects(store.append(s, [ev('B')], { expected_revision: 5 }), WrongExpectedRevisionError)
    await t.rejects(store.append(`${p()}-2`, [ev('B')], { expected_revision: 0 }), WrongExpectedRevisionError)
    await t.rejects(store.append(`${p()}-3`, [ev('B')], { expected_revision: 'stream_exists' }), WrongExpectedRevisionError)
    const err = await store.append(s, [ev('B')], { expected_revision: 3 }).catch(e => e)
    t.equal(err.actual, 0, 'error reports the actual revision')
    t.equal((await store.readStream(s)).length, 1)
    await store.append(s, [ev('B')], { expected_revision: 'any' })
    await store.append(s, [ev('C')], { expected_revision: 'stream_exists' })
    t.equal((await store.readStream(s)).length, 3)
  })

  t.test('bounded slices of a stream: forwards from a revision, backwards from the end or a revision, at most max_count', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const s = `${p()}-slices`
    await store.append(
      s,
      Array.from({ length: 10 }, (_, n) => ev('N', { n })),
      { expected_revision: 'no_stream' }
    )
    const ns = (events: RecordedEvent[]): unknown[] => events.map(e => e.data.n)
    t.same(ns(await store.readStream(s, { from_revision: 7 })), [7, 8, 9], 'forwards from a revision')
    t.same(ns(await store.readStream(s, { from_revision: 2, max_count: 3 })), [2, 3, 4], 'forwards, at most max_count')
    t.same(ns(await store.readStream(s, { from_revision: 10 })), [], 'forwards past the end')
    t.same(ns(await store.readStream(s, { direction: 'backwards', max_count: 3 })), [9, 8, 7], 'backwards from the end')
    t.same(ns(await store.readStream(s, { direction: 'backwards', from_revision: 4, max_count: 2 })), [4, 3], 'backwards from a revision')
    t.same(ns(await store.readStream(s, { direction: 'backwards', from_revision: 1 })), [1, 0], 'backwards to the start')
    t.same(await store.readStream(`${p()}-none`, { direction: 'backwards', max_count: 5 }), [], 'an unknown stream is empty backwards too')
    t.same(
      (await store.readStream(s, { direction: 'backwards', max_count: 1 })).map(e => e.revision),
      [9],
      'revisions are kept'
    )
  })

  t.test('an unknown stream reads as empty', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    t.same(await store.readStream(`${p()}-none`), [])
  })

  t.test('event ids are kept', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const e = ev('A')
    const s = `${p()}-1`
    await store.append(s, [e], { expected_revision: 'any' })
    t.equal((await store.readStream(s))[0].id, e.id)
  })

  t.test('concurrent appends to one stream from two connections: exactly one wins', async t => {
    const a = await factory.open()
    const b = await factory.reopen(a)
    t.teardown(async () => {
      await a.close()
      await b.close()
    })
    for (let i = 0; i < 20; i++) {
      const s = `${p()}-race`
      const results = await Promise.allSettled([
        a.append(s, [ev('X', { by: 'a' })], { expected_revision: 'no_stream' }),
        b.append(s, [ev('X', { by: 'b' })], { expected_revision: 'no_stream' })
      ])
      const won = results.filter(r => r.status === 'fulfilled').length
      const lost = results.filter(r => r.status === 'rejected' && r.reason instanceof WrongExpectedRevisionError).length
      if (won !== 1 || lost !== 1) t.fail(`round ${i}: ${won} won, ${lost} lost`)
      t.equal((await a.readStream(s)).length, 1)
    }
  })

  t.test('readAll returns events in global order after an exclusive position', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const start = await store.headPosition()
    const s1 = `${p()}-1`
    const s2 = `${p()}-2`
    await store.append(s1, [ev('A')], { expected_revision: 'no_stream' })
    await store.append(s2, [ev('B')], { expected_revision: 'no_stream' })
    await store.append(s1, [ev('C')], { expected_revision: 0 })
    const all = (await store.readAll({ from_position: start, max_count: 1000 })).filter(e => e.stream === s1 || e.stream === s2)
    t.same(
      all.map(e => e.type),
      ['A', 'B', 'C']
    )
    const after = await store.readAll({ from_position: all[0].position, max_count: 1000 })
    t.notOk(
      after.some(e => e.id === all[0].id),
      'exclusive start'
    )
    t.equal(await store.headPosition(), all[2].position)
  })

  t.test('readAll stops a page at max_bytes of data, one event at least, and goes on from there', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const start = await store.headPosition()
    const s = p()
    const big = { pad: 'x'.repeat(1000) }
    await store.append(s, [ev('A', big), ev('B', big), ev('C', big), ev('D', big)], { expected_revision: 'no_stream' })
    // The oracle of a size: the data's JSON text, as stored.
    const size = JSON.stringify(big).length
    const types = async (max_bytes: number, from = start) => (await store.readAll({ from_position: from, max_count: 10, max_bytes })).map(e => e.type)
    t.same(await types(1), ['A'], 'one event at least')
    t.same(await types(size), ['A'], 'the data taken reached the budget')
    t.same(await types(size + 1), ['A', 'B'], 'one more while under it')
    t.same(await types(3 * size), ['A', 'B', 'C'])
    t.same(await types(100 * size), ['A', 'B', 'C', 'D'], 'the end of the log bounds it too')
    t.same(
      (await store.readAll({ from_position: start, max_count: 2, max_bytes: 100 * size })).map(e => e.type),
      ['A', 'B'],
      'and max_count'
    )
    const first = await store.readAll({ from_position: start, max_count: 10, max_bytes: size + 1 })
    t.same(await types(size + 1, first[1].position), ['C', 'D'], 'the next page starts after the last event taken')
    t.same(
      first.map(e => e.size),
      [size, size],
      "size is the data's characters"
    )
  })

  t.test('subscription catches up, then goes live, in order, with checkpoints', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const start = await store.headPosition()
    const s = `${p()}-sub`
    await store.append(s, [ev('A'), ev('B')], { expected_revision: 'no_stream' })
    const seen: RecordedEvent[] = []
    let caughtUp = -1
    let lastCheckpoint = 0
    const sub = store.subscribeToAll(
      {
        from_position: start,
        event_types: ['A', 'C', 'D'],
        on_caught_up: pos => {
          caughtUp = pos
        },
        on_checkpoint: pos => {
          lastCheckpoint = pos
        }
      },
      e => {
        if (e.stream === s) seen.push(e)
      }
    )
    await waitUntil(() => caughtUp >= 0)
    t.same(
      seen.map(e => e.type),
      ['A'],
      'filtered catch-up'
    )
    await store.append(s, [ev('C')], { expected_revision: 1 })
    await store.append(s, [ev('D')], { expected_revision: 2 })
    await waitUntil(() => seen.length === 3)
    t.same(
      seen.map(e => e.type),
      ['A', 'C', 'D'],
      'live events follow in order'
    )
    t.equal(lastCheckpoint, seen[2].position)
    await sub.stop()
    // Positive control: a second subscription started before the append sees it; then the stopped one must not have.
    const control: string[] = []
    const sub2 = store.subscribeToAll({ from_position: seen[2].position }, e => {
      if (e.stream === s) control.push(e.type)
    })
    await store.append(s, [ev('A')], { expected_revision: 3 })
    await waitUntil(() => control.length === 1)
    await sub2.stop()
    t.equal(seen.length, 3, 'nothing after stop')
  })

  t.test('on_checkpoint reaches the events the filter skips, caught up and live', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const start = await store.headPosition()
    const s = `${p()}-skip`
    const first = await store.append(s, [ev('Skipped')], { expected_revision: 'no_stream' })
    let checkpoint = 0
    let caughtUp = -1
    const handled: string[] = []
    const sub = store.subscribeToAll(
      {
        from_position: start,
        event_types: ['Wanted'],
        on_checkpoint: pos => {
          checkpoint = Math.max(checkpoint, pos)
        },
        on_caught_up: pos => {
          caughtUp = pos
        }
      },
      e => {
        handled.push(e.type)
      }
    )
    t.teardown(() => sub.stop())
    await waitUntil(() => caughtUp >= 0)
    t.ok(checkpoint >= first.position, 'a skipped event in the catch-up moves the checkpoint')
    const live = await store.append(s, [ev('Skipped')], { expected_revision: 0 })
    // What read-your-writes waits for: the position of an event no projection handles.
    await waitUntil(() => checkpoint >= live.position)
    t.same(handled, [], 'nothing of another type was handled')
  })

  t.test('neither on_checkpoint nor on_caught_up runs ahead of a slow handler', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const start = await store.headPosition()
    const s = `${p()}-slow`
    await store.append(
      s,
      Array.from({ length: 20 }, (_, i) => ev(i % 4 === 3 ? 'Other' : 'Slow', { i })),
      { expected_revision: 'no_stream' }
    )
    const positions = (await store.readStream(s)).map(e => e.position)
    const wanted = positions.filter((_, i) => i % 4 !== 3)
    let handledAtCaughtUp = -1
    const handled: number[] = []
    const ahead: string[] = []
    const sub = store.subscribeToAll(
      {
        from_position: start,
        event_types: ['Slow'],
        // At a checkpoint, every wanted event at or before it has been handled.
        on_checkpoint: pos => {
          for (const w of wanted) if (w <= pos && !handled.includes(w)) ahead.push(`checkpoint ${pos} before event ${w} was handled`)
        },
        on_caught_up: () => {
          handledAtCaughtUp = handled.length
        }
      },
      async e => {
        if (e.stream !== s) return
        await new Promise(resolve => setTimeout(resolve, 5))
        handled.push(e.position)
      }
    )
    t.teardown(() => sub.stop())
    await waitUntil(() => handledAtCaughtUp >= 0)
    t.same(ahead, [], 'every checkpoint came after its event was handled')
    t.equal(handledAtCaughtUp, 15, 'caught up only once every stored event was handled')
    t.same(handled, wanted, 'each once, in order')
  })

  t.test('a live subscription sees appends made through another connection', async t => {
    const a = await factory.open()
    const b = await factory.reopen(a)
    t.teardown(async () => {
      await a.close()
      await b.close()
    })
    const s = `${p()}-x`
    const seen: string[] = []
    const sub = a.subscribeToAll({ from_position: await a.headPosition() }, e => {
      if (e.stream === s) seen.push(e.type)
    })
    await b.append(s, [ev('FromB')], { expected_revision: 'no_stream' })
    await waitUntil(() => seen.length === 1)
    t.same(seen, ['FromB'])
    await sub.stop()
  })

  t.test('a subscription stopped while its handler runs the last stored event ends', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const s = `${p()}-stop`
    const from = await store.headPosition()
    await store.append(s, [ev('Last')], { expected_revision: 'no_stream' })
    let stopping: Promise<void> | null = null
    const handled: string[] = []
    const sub = store.subscribeToAll({ from_position: from }, async e => {
      if (e.stream !== s) return
      // After subscribeToAll has returned; the subscription then has nothing more to read.
      await Promise.resolve()
      handled.push(e.type)
      stopping = sub.stop()
    })
    await waitUntil(() => stopping !== null)
    // A stop whose wake-up came while the handler ran must not leave the loop waiting for an append.
    await stopping
    t.same(handled, ['Last'], 'stop resolved after the one event')
  })

  t.test('a throwing handler stops the subscription and reports the error', async t => {
    const store = await factory.open()
    t.teardown(() => store.close())
    const s = `${p()}-err`
    let reported: unknown = null
    let calls = 0
    store.subscribeToAll(
      { from_position: await store.headPosition() },
      e => {
        if (e.stream !== s) return
        calls++
        throw new Error('boom')
      },
      err => {
        reported = err
      }
    )
    await store.append(s, [ev('A'), ev('B')], { expected_revision: 'no_stream' })
    await waitUntil(() => reported !== null)
    t.equal(calls, 1)
    t.match(String(reported), /boom/)
  })
}

/**
 * Polls `cond` until it holds; fails after `ms`. For its first 2 s it asks every 5 ms (a
 * test that samples a state lasting a few hundred milliseconds, a batch's items `deferred`
 * between greylisting retries 300 ms apart, still sees it); after that each pause grows by
 * half up to 100 ms, so a long wait (a batch against real servers, 80 s) asks about 10 times
 * a second instead of 200 — each ask through the whole app (auth, the read store), which was
 * a large part of the suite's CPU (the real-server test spent 18 s of its 84 s on a CPU,
 * mostly answering polls; 5.7 s with the back-off).
 */
export async function waitUntil(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const start = Date.now()
  const deadline = start + ms
  let pause = 5
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise(resolve => setTimeout(resolve, pause))
    if (Date.now() - start > 2_000) pause = Math.min(100, Math.ceil(pause * 1.5))
  }
}
