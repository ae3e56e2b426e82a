import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { Bus } from '../../src/ports/bus.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'
import { waitUntil } from './eventstore-contract.ts'

export function message(type: string, n: number): RecordedEvent {
  return { id: randomUUID(), stream: `s-${n}`, revision: 0, position: n, type, data: { n }, metadata: { occurred_at: new Date().toISOString() } }
}

/**
 * The contract every Bus adapter passes. `open(group, log)` gives a bus instance (its
 * `log` gets what the bus reports, such as a message given up); instances opened with the
 * same `group` share streams (they stand for processes of one deployment). Absence is
 * asserted after a positive control: a sentinel published after the suspect messages has
 * been delivered (a consumer receives in publication order).
 */
export function busContract(t: Test, open: (group: string, log?: (msg: string, err?: unknown) => void) => Promise<Bus>): void {
  t.test('delivers the subscribed types only, each once', async t => {
    const group = randomUUID().slice(0, 8)
    const bus = await open(group)
    t.teardown(() => bus.close())
    const seen: number[] = []
    const c = await bus.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 1 }, async e => {
      seen.push(e.data.n as number)
    })
    for (let i = 0; i < 5; i++) await bus.publish(message(i % 2 === 0 ? 'JobQueued' : 'ConfirmationCodeIssued', i))
    await waitUntil(() => seen.length === 3)
    t.same(seen, [0, 2, 4], 'in order')
    await bus.publish(message('JobQueued', 99))
    await waitUntil(() => seen.includes(99))
    t.same(seen, [0, 2, 4, 99], 'nothing else before the sentinel')
    await c.stop()
  })

  t.test('a re-published event is delivered once', async t => {
    const bus = await open(randomUUID().slice(0, 8))
    t.teardown(() => bus.close())
    const seen: string[] = []
    await bus.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 4 }, async e => {
      seen.push(e.id)
    })
    const m = message('JobQueued', 1)
    await bus.publish(m)
    await bus.publish(m)
    const second = message('JobQueued', 2)
    await bus.publish(second)
    const sentinel = message('JobQueued', 3)
    await bus.publish(sentinel)
    await waitUntil(() => seen.includes(sentinel.id))
    t.equal(seen.filter(id => id === m.id).length, 1)
    t.equal(seen.filter(id => id === second.id).length, 1)
  })

  t.test('two instances of one service share the work without duplicates', async t => {
    const group = randomUUID().slice(0, 8)
    const a = await open(group)
    const b = await open(group)
    t.teardown(async () => {
      await a.close()
      await b.close()
    })
    const byA: number[] = []
    const byB: number[] = []
    const slow = async (): Promise<void> => {
      await new Promise(resolve => setTimeout(resolve, 5))
    }
    await a.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 2 }, async e => {
      await slow()
      byA.push(e.data.n as number)
    })
    await b.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 2 }, async e => {
      await slow()
      byB.push(e.data.n as number)
    })
    await Promise.all(Array.from({ length: 60 }, (_, i) => a.publish(message('JobQueued', i))))
    await waitUntil(() => byA.length + byB.length >= 60)
    await a.publish(message('JobQueued', 60))
    await waitUntil(() => byA.includes(60) || byB.includes(60))
    const all = [...byA, ...byB].sort((x, y) => x - y)
    t.same(
      all,
      Array.from({ length: 61 }, (_, i) => i),
      'every message once (the sentinel last)'
    )
    t.ok(byA.length > 0 && byB.length > 0, `both worked: ${byA.length} + ${byB.length}`)
  })

  t.test('a failing handler is retried with a delay; a poison message is given up', async t => {
    const reports: string[] = []
    const bus = await open(randomUUID().slice(0, 8), msg => {
      reports.push(msg)
    })
    t.teardown(() => bus.close())
    const attempts = new Map<number, number>()
    await bus.consume({ name: 'mailer', event_types: ['ConfirmationCodeIssued'], concurrency: 2, max_deliveries: 3 }, async e => {
      const n = e.data.n as number
      attempts.set(n, (attempts.get(n) ?? 0) + 1)
      if (n === 1 && attempts.get(n)! < 2) throw new Error('transient')
      if (n === 2) throw new Error('poison')
    })
    await bus.publish(message('ConfirmationCodeIssued', 1))
    await bus.publish(message('ConfirmationCodeIssued', 2))
    await waitUntil(() => attempts.get(1) === 2 && attempts.get(2) === 3, 20_000)
    // Positive controls: the bus reports giving the poison up, then a later message arrives.
    await waitUntil(() => reports.some(r => /gave up|giving up/.test(r)), 20_000)
    await bus.publish(message('ConfirmationCodeIssued', 3))
    await waitUntil(() => attempts.get(3) === 1)
    t.equal(attempts.get(1), 2, 'retried once, then handled')
    t.equal(attempts.get(2), 3, 'given up after max deliveries')
  })
}
