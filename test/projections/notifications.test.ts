import t from 'tap'
import { event, projectionSpec } from '../support/projection-spec.ts'
import { LOW_BALANCE_MIN, notificationsProjection } from '../../src/projections/notifications.ts'

// The account feed, given/when/then: which events make an entry (interface
// "Notifications"), the low-balance mark said once, a new client said after the first.

const U = '01a500f4-0000-7000-8000-000000000001'
const wallet = `wallet-${U}`
const at = '2026-11-25T10:00:00.000Z'
const grant = (amount: number) =>
  event(wallet, 'TokensGranted', { user_uuid: U, grant_uuid: 'g', amount, source: 'operator', plan: null, reason: 'credit', granted_at: at }, at)
const reserve = (job: string, amount: number) => event(wallet, 'TokensReserved', { user_uuid: U, job_uuid: job, amount, reserved_at: at }, at)
const signIn = (session: string, client: string) =>
  event(
    `session-${session}`,
    'SessionStarted',
    {
      session_uuid: session,
      user_uuid: U,
      refresh_hash: 'h',
      expires_at: at,
      started_at: at,
      method: 'password',
      client: { id: client, label: `Browser ${client}` }
    },
    at
  )

t.test('the balance falls below the mark: said once, at the reservation that crossed it', async t => {
  // 100 granted: the mark is max(10, 10% of 100) = 10.
  t.equal(LOW_BALANCE_MIN, 10)
  await projectionSpec(
    t,
    notificationsProjection
  )(grant(100))
    .when(reserve('j1', 85), reserve('j2', 6), reserve('j3', 1))
    .then({
      notifications: [{ kind: 'balance_low', data: { balance: 9, threshold: 10 }, message: 'The balance is low: 9 tokens left' }],
      notification_state: [{ _id: U, balance: 8, granted: 100, low: true }]
    })
})

t.test('the first client is not news; a second one is, and a known one again is not', async t => {
  await projectionSpec(
    t,
    notificationsProjection
  )(signIn('s1', 'c1'))
    .when(signIn('s2', 'c2'), signIn('s3', 'c1'))
    .then({
      notifications: [{ kind: 'new_client_sign_in', message: 'A sign-in from a new client: Browser c2', data: { session_uuid: 's2' } }],
      notification_state: [{ clients: ['c1', 'c2'] }]
    })
})

t.test('an erased account: its feed goes and its later events make no entry', async t => {
  await projectionSpec(t, notificationsProjection)(signIn('s1', 'c1'), signIn('s2', 'c2'))
    .when(event(`user-${U}`, 'UserDeleted', { user_uuid: U, deleted_at: at }, at), signIn('s3', 'c3'))
    .then({ notifications: [], notification_state: [{ erased: true, clients: [] }] })
})

t.test('seen up to a position: the mark only moves forward', async t => {
  await projectionSpec(t, notificationsProjection)()
    .when(
      event(`notifications-${U}`, 'NotificationsSeen', { user_uuid: U, up_to: 7, seen_at: at }, at),
      event(`notifications-${U}`, 'NotificationsSeen', { user_uuid: U, up_to: 3, seen_at: at }, at)
    )
    .then({ notifications: [], notification_state: [{ seen_up_to: 7 }] })
})
