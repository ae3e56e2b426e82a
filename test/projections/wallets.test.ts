import t from 'tap'
import { event, projectionSpec } from '../support/projection-spec.ts'
import { walletsProjection } from '../../src/projections/wallets.ts'

// The wallets read model, given/when/then: the oracle is the ledger's rules written out
// by hand (a reservation holds, a capture spends what was held, a release gives back).

const U = '01a300f4-0000-7000-8000-000000000001'
const J = '01a300f4-0000-7000-8000-000000000101'
const wallet = `wallet-${U}`
const at = '2026-11-25T10:00:00.000Z'
const later = '2026-11-25T10:20:00.000Z'
const granted = event(
  wallet,
  'TokensGranted',
  { user_uuid: U, grant_uuid: 'g1', amount: 100, source: 'plan', plan: 'free', reason: 'Free plan', granted_at: at },
  at
)
const reserved = event(wallet, 'TokensReserved', { user_uuid: U, job_uuid: J, amount: 3, reserved_at: at }, at)
const captured = event(wallet, 'TokensCaptured', { user_uuid: U, job_uuid: J, amount: 1, captured_at: later }, later)
const released = event(wallet, 'TokensReleased', { user_uuid: U, job_uuid: J, amount: 2, reason: 'unused_checks', released_at: later }, later)

t.test('a grant: the balance, one transaction, one group, the slot closing balance', async t => {
  await projectionSpec(t, walletsProjection)()
    .when(granted)
    .then({
      wallets: [{ _id: U, balance: 100, reserved: 0, spent: 0, granted: 100, transactions: 1, groups: 1 }],
      wallet_transactions: [{ transaction_type: 'grant', amount: 100, tokens: 100, balance_after: 100, seq: 0 }],
      wallet_groups: [{ _id: /\|/, transaction_type: 'grant', amount: 100, transactions: [{ transaction_type: 'grant' }] }],
      wallet_balances: [{ _id: `${U}|2026-11-25T10:00:00.000Z`, balance: 100 }]
    })
})

t.test("a job's reservation, capture and release: one group, the held tokens spent and given back", async t => {
  await projectionSpec(
    t,
    walletsProjection
  )(granted)
    .when(reserved, captured, released)
    .then({
      wallets: [{ balance: 99, reserved: 0, spent: 1, granted: 100, transactions: 4, groups: 2 }],
      wallet_transactions: [{}, {}, {}, {}],
      wallet_groups: [
        { amount: 100, transaction_type: 'grant' },
        { _id: `${U}|${J}`, job_uuid: J, amount: -1, transaction_type: 'reservation', transactions: [{ amount: -3 }, { amount: 0, tokens: 1 }, { amount: 2 }] }
      ],
      wallet_balances: [
        { slot: '2026-11-25T10:00:00.000Z', balance: 97 },
        { slot: '2026-11-25T10:15:00.000Z', balance: 99 }
      ]
    })
})

t.test('an erased account: its documents go, a tombstone stays, later settlements make nothing', async t => {
  await projectionSpec(t, walletsProjection)(granted, reserved)
    .when(event(`user-${U}`, 'UserDeleted', { user_uuid: U, deleted_at: later }, later), released)
    .then({
      wallets: [{ _id: U, user_uuid: null, erased: true }],
      wallet_transactions: [],
      wallet_groups: [],
      wallet_balances: []
    })
})
