import t from 'tap'
import { greylistRetryAt } from '../../../src/domain/job/greylisting.ts'

// When a greylisted address is asked next: retryMs × 1.25^n after the first try, so that
// the first retry past any receiver's window is within 1.25× of it; never sooner than a
// quarter of retryMs after the last answer; never after the deadline, where the last
// attempt is; nothing once an answer comes at or after the deadline. The oracle: the
// rule's arithmetic written out, and postgrey's default window (300 s).

const T0 = Date.parse('2026-11-27T12:00:00.000Z')

t.test('retries at 60 s, 75 s, 93.75 s, … after the first try', async t => {
  const deadline = T0 + 30 * 60_000
  t.equal(greylistRetryAt(T0, T0, 60_000, 0, deadline), T0 + 60_000)
  t.equal(greylistRetryAt(T0, T0 + 60_000, 60_000, 1, deadline), T0 + 75_000)
  t.equal(greylistRetryAt(T0, T0 + 75_000, 60_000, 2, deadline), T0 + 93_750)
  t.equal(greylistRetryAt(T0, T0, 500, 0, deadline), T0 + 500, 'a short window')
})

t.test("postgrey's default window (300 s): the first retry past it within 1.25× of it", async t => {
  const deadline = T0 + 30 * 60_000
  let at = T0
  let n = 0
  while (at - T0 < 300_000) at = greylistRetryAt(T0, at, 60_000, n++, deadline)!
  t.ok(at - T0 <= 1.25 * 300_000, `first retry past the window at ${(at - T0) / 1000} s, after ${n} retries`)
  t.equal(n, 9, '60, 75, 94, 117, 146, 183, 229, 286, then 358 s')
})

t.test('a round that ran late: the next retry a quarter of retryMs after its answer', async t => {
  const deadline = T0 + 30 * 60_000
  t.equal(greylistRetryAt(T0, T0 + 200_000, 60_000, 1, deadline), T0 + 215_000)
})

t.test('the last attempt is at the deadline, and an answer at or after it ends the retries', async t => {
  const deadline = T0 + 2_500
  t.equal(greylistRetryAt(T0, T0 + 2_400, 500, 2, deadline), deadline, 'the schedule would pass it: at the deadline')
  t.equal(greylistRetryAt(T0, deadline, 500, 3, deadline), null, 'answered at the deadline: given up')
  t.equal(greylistRetryAt(T0, deadline + 40, 500, 3, deadline), null, 'answered after it: given up')
  t.equal(greylistRetryAt(T0, T0 + 2_499, 500, 3, deadline), deadline, 'a millisecond before it: one more, at it')
})
