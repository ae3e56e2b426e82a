import t from 'tap'
import * as notification from '../../../src/domain/notification/decider.ts'
import type { NotificationCommand } from '../../../src/domain/notification/decider.ts'
import type { NotificationsSeen } from '../../../src/domain/notification/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// The seen cursor of an account's notification feed (docs/interface.md §4, `POST
// /api/notifications/seen` with `up_to`, "200 cursor now in effect"): it only moves forward.

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'

// Event builder.
const seen = build<NotificationsSeen>('NotificationsSeen', { user_uuid: U, up_to: 5, seen_at: now })

// Command builder.
const markSeen = (upTo: number): NotificationCommand => ({ type: 'MarkNotificationsSeen', data: { user_uuid: U, up_to: upTo, now } })

t.test('MarkNotificationsSeen: the cursor moves forward, never back', async t => {
  const n = spec(t, notification)
  n([]).when(markSeen(5)).then([seen()], 'a first mark moves the cursor from nothing seen to 5')
  n([seen()])
    .when(markSeen(9))
    .then([seen({ up_to: 9 })], 'a later position moves it forward')
  n([seen()]).when(markSeen(5)).thenNothing('the same position: nothing')
  n([seen()]).when(markSeen(3)).thenNothing('an older position never moves it back')
  n([]).when(markSeen(0)).thenNothing('position 0 is "nothing seen" already')
  n([]).thenState(s => s.seen_up_to, 0, 'a new feed has seen nothing')
  n([seen(), seen({ up_to: 9 })]).thenState(s => s.seen_up_to, 9, 'the latest event carries the cursor')
})
