import t from 'tap'
import { greylistRetryAt } from '../../../src/domain/job/greylisting.ts'

// When a greylisted address is asked next: the window doubled per retry made, counted
// from the greylisted answer (no slack: the server had the RCPT before it answered); never after the deadline, where the last attempt
// is; nothing once an answer comes at or after the deadline. The oracle: the rule's
// arithmetic written out.

const T0 = Date.parse('2026-11-27T12:00:00.000Z')

t.test('back-off: 60 s, 120 s, 240 s after each greylisted answer', async t => {
  const deadline = T0 + 30 * 60_000
  t.equal(greylistRetryAt(T0, 60_000, 0, deadline), T0 + 60_000)
  t.equal(greylistRetryAt(T0, 60_000, 1, deadline), T0 + 120_000)
  t.equal(greylistRetryAt(T0, 60_000, 2, deadline), T0 + 240_000)
  t.equal(greylistRetryAt(T0, 500, 0, deadline), T0 + 500, 'a short window')
})

t.test('the last attempt is at the deadline, and an answer at or after it ends the retries', async t => {
  const deadline = T0 + 2_500
  t.equal(greylistRetryAt(T0 + 1_600, 500, 2, deadline), deadline, 'the back-off (3.65 s) would pass it: at the deadline')
  t.equal(greylistRetryAt(deadline, 500, 3, deadline), null, 'answered at the deadline: given up')
  t.equal(greylistRetryAt(deadline + 40, 500, 3, deadline), null, 'answered after it: given up')
  t.equal(greylistRetryAt(T0 + 2_499, 500, 3, deadline), deadline, 'a millisecond before it: one more, at it')
})
