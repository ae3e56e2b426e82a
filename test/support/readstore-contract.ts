import type { Test } from 'tap'
import type { ReadStore } from '../../src/infra/readstore/port.ts'

/** The contract every ReadStore adapter passes. */
export function readStoreContract (t: Test, open: () => Promise<ReadStore>): void {
  t.test('put, get, delete', async t => {
    const s = await open()
    t.teardown(() => s.close())
    const c = s.collection<{ _id: string, n: number }>('things')
    t.equal(await c.get('a'), null)
    await c.put({ _id: 'a', n: 1 })
    t.same(await c.get('a'), { _id: 'a', n: 1 })
    await c.delete('a')
    t.equal(await c.get('a'), null)
  })

  t.test('revision guard: an older or equal document does not replace a newer one', async t => {
    const s = await open()
    t.teardown(() => s.close())
    const c = s.collection<{ _id: string, revision: number, v: string }>('guarded')
    await c.put({ _id: 'x', revision: 2, v: 'second' })
    await c.put({ _id: 'x', revision: 1, v: 'first' })
    await c.put({ _id: 'x', revision: 2, v: 'second again' })
    t.equal((await c.get('x'))?.v, 'second', 'the first write of a revision wins; replays change nothing')
    await c.put({ _id: 'x', revision: 3, v: 'third' })
    t.equal((await c.get('x'))?.v, 'third')
  })

  t.test('find: equality and any-of filters, sort with id tiebreak, pagination and total', async t => {
    const s = await open()
    t.teardown(() => s.close())
    const c = s.collection<{ _id: string, owner: string, at: number, status: string }>('listed')
    for (let i = 0; i < 10; i++) await c.put({ _id: `d${i}`, owner: i < 7 ? 'u1' : 'u2', at: Math.floor(i / 2), status: i % 3 === 0 ? 'done' : 'queued' })
    const page = await c.find({ owner: 'u1' }, { sort: { at: -1 }, limit: 3, offset: 1 })
    t.equal(page.total, 7)
    t.same(page.items.map(d => d._id), ['d5', 'd4', 'd3'])
    const anyOf = await c.find({ owner: 'u1', status: ['done'] })
    t.same(anyOf.items.map(d => d._id).sort(), ['d0', 'd3', 'd6'])
    t.equal((await c.findOne({ owner: 'u2', status: 'done' }))?._id, 'd9')
  })

  t.test('checkpoints start at 0 and never move back', async t => {
    const s = await open()
    t.teardown(() => s.close())
    t.equal(await s.getCheckpoint('p'), 0)
    await s.setCheckpoint('p', 10)
    await s.setCheckpoint('p', 5)
    t.equal(await s.getCheckpoint('p'), 10, 'compare-and-set')
  })
}
