import t from 'tap'
import { validate, version } from 'uuid'
import { uuidv7 } from '../../src/lib/ids.ts'

// UUIDv7 ids (RFC 9562 §5.7) drawn from a pool of random bytes: valid version-7 UUIDs,
// their first 48 bits the Unix milliseconds they were made at, all distinct, and in the
// order they were made (the counter of §6.2 method 1 within a millisecond). The oracles:
// the uuid package's validate and version, the clock read around them, a sort.

t.test('100,000 ids: valid v7, distinct, sorted as made, stamped with their millisecond', async t => {
  const before = Date.now()
  const ids = Array.from({ length: 100_000 }, () => uuidv7())
  const after = Date.now()
  t.ok(
    ids.every(id => validate(id) && version(id) === 7),
    'each a valid version-7 UUID'
  )
  t.ok(
    ids.every(id => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)),
    'the RFC 9562 variant bits'
  )
  t.equal(new Set(ids).size, ids.length, 'no two alike')
  t.same([...ids].sort(), ids, 'sorted in the order they were made')
  const stamps = ids.map(id => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16))
  t.ok(stamps[0] >= before && stamps[stamps.length - 1] <= after + 1, 'the milliseconds they were made at')
  t.ok(new Set(stamps).size < ids.length, 'several in one millisecond (the counter is what orders them)')
})

t.test('ids made a millisecond apart start their counter afresh (random, not carried)', async t => {
  const a = uuidv7()
  const start = Date.now()
  while (Date.now() === start) {}
  const b = uuidv7()
  t.ok(b > a)
  t.not(a.slice(14, 23), b.slice(14, 23), 'the counter bits differ')
})
