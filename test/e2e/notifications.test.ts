import t from 'tap'
import { notify, KNOWN_CLIENTS, LOW_BALANCE_MIN, type NotificationStateDoc } from '../../src/projections/notifications.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'

// notify() is the feed's rule: which events make an entry, and what it says. The oracle is
// the interface's list of what a customer should hear about.

const U = '01a200f4-0000-7000-8000-000000000001'
let position = 0
const ev = (type: string, data: Record<string, unknown>): RecordedEvent => ({
  id: `e${++position}`,
  stream: 's',
  revision: 0,
  position,
  type,
  data: { user_uuid: U, ...data },
  metadata: { occurred_at: '2026-11-23T10:00:00.000Z' }
})
const empty = (): NotificationStateDoc => ({ _id: U, user_uuid: U, seen_up_to: 0, clients: [], balance: 0, granted: 0, low: false, erased: false })

t.test('each kind the interface names makes one entry', async t => {
  const s = empty()
  const cases: Array<[RecordedEvent, string, RegExp]> = [
    [
      ev('WebhookEndpointDisabled', { webhook_uuid: 'w', reason: 'consecutive_failures', consecutive_failures: 20 }),
      'webhook_disabled',
      /disabled after 20 failed deliveries/
    ],
    [ev('WebhookEndpointDisabled', { webhook_uuid: 'w', reason: 'operator' }), 'webhook_disabled', /was disabled$/],
    [ev('ApiKeyCreated', { key_uuid: 'k', name: 'crm', environment: 'live' }), 'api_key_created', /"crm"/],
    [ev('ApiKeyRevoked', { key_uuid: 'k', reason: 'user' }), 'api_key_revoked', /revoked/],
    [ev('AgentCreated', { agent_uuid: 'a', name: 'bot' }), 'agent_created', /"bot"/],
    [ev('AgentRevoked', { agent_uuid: 'a', reason: 'user' }), 'agent_revoked', /revoked/],
    [ev('TwoFactorEnabled', {}), 'two_factor_enabled', /turned on/],
    [ev('TwoFactorDisabled', {}), 'two_factor_disabled', /turned off/]
  ]
  for (const [event, kind, message] of cases) {
    const { entry, state } = notify(s, event)
    t.equal(entry?.kind, kind, event.type)
    t.match(entry?.message, message)
    t.same(state, s, `${event.type} leaves the state alone`)
  }
  t.notMatch(JSON.stringify(cases.map(([e]) => notify(s, e).entry)), /secret|hash/, 'no secret in any entry')
})

t.test('a sign-in from a new client: not the first client, not a known one, and the memory is bounded', async t => {
  const signIn = (id: string): RecordedEvent => ev('SessionStarted', { session_uuid: `s-${id}`, method: 'password', client: { id, label: `Client ${id}` } })
  let s = empty()
  let r = notify(s, signIn('c1'))
  t.equal(r.entry, null, 'the first client of an account is not news')
  s = r.state
  t.equal(notify(s, signIn('c1')).entry, null, 'a known client is not news')
  r = notify(s, signIn('c2'))
  t.match(r.entry, { kind: 'new_client_sign_in', message: /Client c2/, data: { client: 'Client c2', method: 'password' } })
  t.equal(notify(s, ev('SessionStarted', { session_uuid: 'x', method: 'password' })).entry, null, 'a session without client facts (older events) is not news')
  s = r.state
  for (let i = 0; i < KNOWN_CLIENTS + 10; i++) s = notify(s, signIn(`n${i}`)).state
  t.equal(s.clients.length, KNOWN_CLIENTS, `at most ${KNOWN_CLIENTS} clients remembered`)
  t.ok(notify(s, signIn('c1')).entry, 'a client forgotten long ago is news again')
})

t.test('balance low: said once when a reservation takes it under the mark, again only after it rose above', async t => {
  let s = empty()
  const step = (type: string, amount: number): ReturnType<typeof notify> => {
    const r = notify(s, ev(type, { amount, job_uuid: 'j' }))
    s = r.state
    return r
  }
  t.equal(step('TokensGranted', 1000).entry, null)
  t.equal(step('TokensReserved', 850).entry, null, '150 left: above the mark of 100 (10% of 1,000)')
  t.match(step('TokensReserved', 60).entry, { kind: 'balance_low', data: { balance: 90, threshold: 100 } }, 'under the mark')
  t.equal(step('TokensReserved', 10).entry, null, 'said once')
  t.equal(step('TokensReleased', 5).entry, null, 'a release does not say it')
  t.equal(step('TokensGranted', 500).entry, null, 'a grant lifts it above the new mark (150)')
  t.equal(s.low, false)
  t.match(step('TokensReserved', 460).entry, { kind: 'balance_low' }, 'under the mark again: said again')
  let tiny = { ...empty() }
  tiny = notify(tiny, ev('TokensGranted', { amount: 20 })).state
  t.match(
    notify(tiny, ev('TokensReserved', { amount: 11, job_uuid: 'j' })).entry,
    { data: { threshold: LOW_BALANCE_MIN } },
    `the mark is at least ${LOW_BALANCE_MIN} tokens`
  )
})

t.test('seen moves forward only; an erased account forgets its clients', async t => {
  let s = notify(empty(), ev('NotificationsSeen', { up_to: 40 })).state
  s = notify(s, ev('NotificationsSeen', { up_to: 12 })).state
  t.equal(s.seen_up_to, 40)
  s = notify({ ...s, clients: ['a', 'b'] }, ev('UserDeleted', {})).state
  t.same([s.clients, s.erased], [[], true])
})
