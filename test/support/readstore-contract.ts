import type { Test } from 'tap'
import { CheckpointConflictError, type CollectionSpec, type Doc, type ReadStore } from '../../src/ports/read-store.ts'
import { waitUntil } from './eventstore-contract.ts'

/** Opens a fresh store (`open()`), or a second connection to the same one (`open(first)`). */
export type StoreFactory = (same?: ReadStore) => Promise<ReadStore>

interface Row extends Doc {
  owner: string
  at: string
  n: number
  status: string | null
  done: boolean
}
const SPEC: CollectionSpec = {
  name: 'rows',
  projection: 'contract',
  fields: { owner: 'text', at: 'text', n: 'number', status: 'text', done: 'boolean' },
  indexes: [
    ['owner', 'at'],
    ['owner', 'n'],
    ['owner', 'status', 'at']
  ]
}
const row = (i: number): Row => ({
  _id: `r${String(i).padStart(2, '0')}`,
  owner: i < 14 ? 'u1' : 'u2',
  at: `2026-01-${String(1 + Math.floor(i / 2)).padStart(2, '0')}`,
  n: i % 5,
  status: i % 3 === 0 ? 'done' : i % 3 === 1 ? 'queued' : null,
  done: i % 2 === 0,
  nested: { keep: [i] }
})
const put = (doc: Doc) => ({ op: 'put' as const, spec: SPEC, doc })

/**
 * The contract every ReadStore adapter passes: indexed queries (equality, any-of, ranges,
 * prefixes, null), sorts with the `_id` tiebreak, counts; batches committed with their
 * checkpoints by compare-and-set; generations and rebuilds beside the live one; the lease.
 */
export function readStoreContract(t: Test, open: StoreFactory): void {
  const prepared = async (s: ReadStore, signature = 'v1'): Promise<ReadStore> => {
    await s.prepare('contract', signature, [SPEC])
    return s
  }

  t.test('writes with their checkpoint; get, find, count', async t => {
    const s = await prepared(await open())
    t.teardown(() => s.close())
    const c = s.collection<Row>(SPEC)
    t.equal(await c.get('r00'), null)
    await s.write(
      Array.from({ length: 20 }, (_, i) => put(row(i))),
      [{ projection: 'contract', from: 0, to: 20 }]
    )
    t.equal(await s.getCheckpoint('contract'), 20)
    t.same(await c.get('r03'), row(3), 'the document comes back whole')
    const ids = async (q: Parameters<typeof c.find>[0]): Promise<string[]> => (await c.find(q)).map(d => d._id)
    t.same(
      await ids({ where: { owner: 'u1' }, sort: [['at', -1]], limit: 3, offset: 1 }),
      ['r12', 'r11', 'r10'],
      'sorted descending, ties by _id descending, paged'
    )
    t.same(await ids({ where: { owner: 'u1', status: { in: ['done'] } }, sort: [['at', 1]] }), ['r00', 'r03', 'r06', 'r09', 'r12'], 'any of')
    t.same(await ids({ where: { owner: 'u1', status: null }, sort: [['at', 1]] }), ['r02', 'r05', 'r08', 'r11'], 'null')
    t.same(
      await ids({ where: { owner: 'u1', status: { in: ['queued', null] } }, sort: [['at', 1]] }),
      ['r01', 'r02', 'r04', 'r05', 'r07', 'r08', 'r10', 'r11', 'r13'],
      'any of, null among them'
    )
    t.same(
      await ids({ where: { owner: 'u1', at: { gte: '2026-01-03', lte: '2026-01-04' } }, sort: [['at', 1]] }),
      ['r04', 'r05', 'r06', 'r07'],
      'an inclusive range'
    )
    t.same(
      await ids({ where: { owner: 'u2', _id: { prefix: 'r1' } }, sort: [['n', 1]] }),
      ['r15', 'r16', 'r17', 'r18', 'r19', 'r14'].sort((a, b) => row(Number(a.slice(1))).n - row(Number(b.slice(1))).n || a.localeCompare(b)),
      'a prefix, sorted on a number'
    )
    t.same(
      await ids({
        where: { owner: 'u1', done: true },
        sort: [
          ['n', -1],
          ['at', -1]
        ],
        limit: 2
      }),
      ['r04', 'r08'],
      'booleans; two sort keys'
    )
    for (const [q, index] of [
      [
        {
          where: { owner: 'u1', at: { gte: '2026-01-02', lte: '2026-01-06' } },
          sort: [
            ['n', -1],
            ['at', -1]
          ],
          limit: 4,
          offset: 1
        },
        ['owner', 'n']
      ],
      [{ where: { owner: 'u1', status: { in: ['done', null] } }, sort: [['at', 1]] }, ['owner', 'at']],
      [{ where: { owner: 'u2' }, sort: [['_id', -1]], limit: 3 }, ['owner', 'n']]
    ] as const) {
      t.same(await ids({ ...q, use_index: index }), await ids(q), `through the index on ${index.join(', ')}: the same answer`)
    }
    await t.rejects(c.find({ where: { owner: 'u1' }, use_index: ['n'] }), /no index on n/, 'an undeclared index is refused')
    t.equal(await c.count({ owner: 'u1' }), 14)
    t.equal(await c.count({ owner: 'u1', status: { in: ['done', 'queued'] }, at: { gte: '2026-01-02' } }), 8)
    t.equal(await c.count(), 20)
    t.equal((await c.findOne({ owner: 'u2', status: 'done' }))?._id, 'r15')
    await s.write([{ op: 'delete', spec: SPEC, id: 'r00' }, put({ ...row(1), n: 42 })], [{ projection: 'contract', from: 20, to: 21 }])
    t.equal(await c.get('r00'), null, 'deleted')
    t.equal((await c.get('r01'))?.n, 42, 'replaced')
    t.equal(await c.count({ owner: 'u1' }), 13)
  })

  t.test('a batch commits only from the stored checkpoint (compare-and-set), all or nothing', async t => {
    const a = await prepared(await open())
    const b = await open(a)
    t.teardown(async () => {
      await b.close()
      await a.close()
    })
    await a.write([put(row(1))], [{ projection: 'contract', from: 0, to: 5 }])
    await t.rejects(b.write([put(row(2))], [{ projection: 'contract', from: 0, to: 6 }]), CheckpointConflictError, 'another process moved the checkpoint')
    t.equal(await a.collection(SPEC).get('r02'), null, 'nothing of the refused batch was written')
    await b.write([put(row(2))], [{ projection: 'contract', from: 5, to: 6 }])
    t.equal(await a.getCheckpoint('contract'), 6)
    t.ok(await a.collection(SPEC).get('r02'))
  })

  t.test('generations: the same signature keeps the data, another one starts afresh; a rebuild switches when activated', async t => {
    const s = await prepared(await open())
    const other = await open(s)
    t.teardown(async () => {
      await other.close()
      await s.close()
    })
    await s.write([put(row(1))], [{ projection: 'contract', from: 0, to: 1 }])
    await prepared(s)
    t.ok(await s.collection(SPEC).get('r01'), 'same signature: kept')
    const target = await s.startRebuild('contract', [SPEC])
    t.equal(await target.store.getCheckpoint('contract'), 0, 'the rebuild starts from the first event')
    await target.store.write([put({ ...row(1), n: 99 }), put(row(2))], [{ projection: 'contract', from: 0, to: 7 }])
    t.equal((await other.collection<Row>(SPEC).get('r01'))?.n, 1, 'the live generation serves meanwhile')
    t.equal(await other.getCheckpoint('contract'), 1)
    t.equal(await target.activate(), true)
    t.equal(await target.activate(), false, 'compare-and-set')
    await waitUntil(async () => (await other.collection<Row>(SPEC).get('r01'))?.n === 99)
    t.pass('readers of another connection follow the switch')
    t.equal(await other.getCheckpoint('contract'), 7)
    await prepared(s, 'v2')
    t.equal(await s.collection(SPEC).get('r01'), null, 'a new signature: a new, empty generation')
    t.equal(await s.getCheckpoint('contract'), 0)
  })

  t.test('the same answers as JSON would give: an undefined field is left out, a missing field matches null, no sort means _id order', async t => {
    const s = await prepared(await open())
    t.teardown(() => s.close())
    const c = s.collection<Row>(SPEC)
    const bare = { _id: 'b2', owner: 'u3', at: '2026-02-01', n: 1, done: false } as unknown as Row
    await s.write(
      [put({ ...row(1), _id: 'b3', owner: 'u3', status: undefined } as unknown as Doc), put(bare), put({ ...row(2), _id: 'b1', owner: 'u3', status: 'done' })],
      [{ projection: 'contract', from: 0, to: 3 }]
    )
    const b3 = (await c.get('b3')) as Record<string, unknown>
    t.notOk('status' in b3, 'a field set to undefined is not stored (not even as null)')
    t.same(
      (await c.find({ where: { owner: 'u3', status: null } })).map(d => d._id),
      ['b2', 'b3'],
      'missing and undefined fields match null'
    )
    t.same(
      (await c.find({ where: { owner: 'u3', status: { in: [null] } } })).map(d => d._id),
      ['b2', 'b3']
    )
    t.equal(await c.count({ owner: 'u3', status: null }), 2)
    t.same(
      (await c.find({ where: { owner: 'u3' } })).map(d => d._id),
      ['b1', 'b2', 'b3'],
      'without a sort: by _id'
    )
  })

  t.test('a batch judged against one generation never lands in another: a write racing a switch is refused or stays in the old generation', async t => {
    const live = await prepared(await open())
    const rebuilder = await open(live)
    t.teardown(async () => {
      await rebuilder.close()
      await live.close()
    })
    await live.write([put(row(1))], [{ projection: 'contract', from: 0, to: 5 }])
    const target = await rebuilder.startRebuild('contract', [SPEC])
    await target.store.write([put(row(1)), put(row(2))], [{ projection: 'contract', from: 0, to: 7 }])
    t.equal(await target.activate(), true)
    // The live writer still believes its checkpoint is 5 (the old generation's).
    const outcome = await live.write([put({ ...row(9), n: 555 })], [{ projection: 'contract', from: 5, to: 6 }]).then(
      () => 'written',
      (err: unknown) => err
    )
    if (outcome !== 'written') t.ok(outcome instanceof CheckpointConflictError, 'refused by compare-and-set against the new generation')
    const reader = await open(live)
    t.teardown(() => reader.close())
    t.equal(await reader.getCheckpoint('contract'), 7, "the new generation's checkpoint is untouched")
    t.equal(await reader.collection(SPEC).get('r09'), null, 'and so are its documents')
    t.equal(await target.activate(), false, 'a generation already live does not switch again')
    const second = await rebuilder.startRebuild('contract', [SPEC])
    const third = await rebuilder.startRebuild('contract', [SPEC])
    await third.store.write([put(row(3))], [{ projection: 'contract', from: 0, to: 8 }])
    t.equal(await third.activate(), true)
    t.equal(await second.activate(), false, 'a rebuild of a generation that is no longer live does not switch')
  })

  t.test("consumer checkpoints (the relay's position) are kept by name, apart from the projections' generations", async t => {
    const a = await open()
    const b = await open(a)
    t.teardown(async () => {
      await b.close()
      await a.close()
    })
    t.equal(await a.getConsumerCheckpoint('relay'), 0)
    await a.setConsumerCheckpoint('relay', 41)
    await a.setConsumerCheckpoint('relay', 42)
    await a.setConsumerCheckpoint('other', 7)
    t.equal(await b.getConsumerCheckpoint('relay'), 42, 'seen from another connection')
    t.equal(await b.getConsumerCheckpoint('other'), 7)
    await prepared(a, 'v9')
    t.equal(await b.getConsumerCheckpoint('relay'), 42, 'a new generation of a projection leaves it alone')
  })

  t.test('the projector lease: one holder at a time, taken over once it expires', async t => {
    const a = await open()
    const b = await open(a)
    t.teardown(async () => {
      await b.close()
      await a.close()
    })
    t.equal(await a.lease('a', 200), true)
    t.equal(await b.lease('b', 200), false)
    t.equal(await a.lease('a', 200), true, 'renewed')
    await new Promise(resolve => setTimeout(resolve, 250))
    t.equal(await b.lease('b', 200), true, 'expired: taken over')
    t.equal(await a.lease('a', 200), false)
  })
}
