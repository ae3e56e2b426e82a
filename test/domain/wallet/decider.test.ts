import t from 'tap'
import * as wallet from '../../../src/domain/wallet/decider.ts'
import type { WalletCommand } from '../../../src/domain/wallet/decider.ts'
import { auditWallet } from '../../../src/domain/wallet/audit.ts'
import type { TokensCaptured, TokensGranted, TokensReleased, TokensReserved, WalletBooksClosed, WalletEvent } from '../../../src/domain/wallet/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// The wallet of one account (stream `wallet-<user uuid>`; docs/design/architecture.md "Money": reserve
// before queueing, 402 when short; capture on a firm verdict, release on `unknown` or
// failure; never overspend). Interface section 4: POST /api/verify "402 wallet too low to
// reserve cost"; section 7: "402 wallet balance too low to reserve a job or chunk cost".

const now = '2026-11-22T10:00:00.000Z'
const U = 'u-1'
const R = (job: string): string => `r-${job}`

// Event builders.
const grantedEvent = build<TokensGranted>('TokensGranted', {
  user_uuid: U,
  grant_uuid: 'g-1',
  amount: 100,
  source: 'plan',
  plan: 'free',
  reason: 'Free plan',
  granted_at: now
})
const granted = (amount: number, grant = 'g-1'): TokensGranted => grantedEvent({ amount, grant_uuid: grant })
const reservedEvent = build<TokensReserved>('TokensReserved', { user_uuid: U, job_uuid: 'j1', reservation_uuid: 'r-j1', amount: 1, reserved_at: now })
const reserved = (job: string, amount: number, reservation = R(job)): TokensReserved => reservedEvent({ job_uuid: job, reservation_uuid: reservation, amount })
const captured = (job: string, amount: number, reservation = R(job)): TokensCaptured => ({
  type: 'TokensCaptured',
  data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, amount, captured_at: now }
})
const released = (job: string, amount: number, reason: string, reservation = R(job)): TokensReleased => ({
  type: 'TokensReleased',
  data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, amount, reason, released_at: now }
})
const booksClosed = build<WalletBooksClosed>('WalletBooksClosed', { user_uuid: U, balance: 0, reservations: [], recent_grants: [], closed_at: now })

// Command builders.
const grant = (id: string, amount: number, over: Partial<Extract<WalletCommand, { type: 'GrantTokens' }>['data']> = {}): WalletCommand => ({
  type: 'GrantTokens',
  data: { user_uuid: U, grant_uuid: id, amount, source: 'plan', plan: 'free', reason: 'Free plan', now, ...over }
})
const reserve = (
  job: string,
  amount: number,
  reservation = R(job),
  over: Partial<Extract<WalletCommand, { type: 'ReserveTokens' }>['data']> = {}
): WalletCommand => ({ type: 'ReserveTokens', data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, amount, now, ...over } })
const capture = (job: string, amount: number, reservation: string | null = R(job)): WalletCommand => ({
  type: 'CaptureTokens',
  data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, amount, now }
})
const release = (job: string, reservation: string | null = R(job), reason = 'job_failed'): WalletCommand => ({
  type: 'ReleaseTokens',
  data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, reason, now }
})

t.test('GrantTokens', async t => {
  const w = spec(t, wallet)
  w([])
    .when(grant('g-1', 100))
    .then([granted(100)], 'a grant adds tokens')
  w([granted(100)])
    .when(grant('g-1', 100))
    .thenNothing('a grant is applied once')
  w([])
    .when(grant('g-2', 0, { source: 'operator', plan: null, reason: 'x' }))
    .thenRejects('wallet.invalid_amount', 400, 'a grant of nothing is refused')
  w([])
    .when(grant('g-2', -5, { source: 'operator', plan: null }))
    .thenRejects('wallet.invalid_amount', 400, 'a negative grant is refused')
  w([])
    .when(grant('g-3', 500, { source: 'top_up', plan: null, reason: 'top-up x1' }))
    .then([grantedEvent({ grant_uuid: 'g-3', amount: 500, source: 'top_up', plan: null, reason: 'top-up x1' })], 'a top-up pack bought is granted')
  const grants = Array.from({ length: wallet.RECENT_GRANTS + 10 }, (_, i) => granted(1, `g-${i}`))
  w(grants).thenState(s => s.recent_grants.length, wallet.RECENT_GRANTS, 'the grant window is bounded')
})

t.test('ReserveTokens', async t => {
  const w = spec(t, wallet)
  w([]).when(reserve('j1', 1.5)).thenRejects('wallet.invalid_amount', 400, 'a fractional reservation is refused')
  w([granted(2)])
    .when(reserve('j1', 0))
    .thenRejects('wallet.invalid_amount', 400, 'a reservation of nothing is refused')
  w([granted(2)])
    .when(reserve('j1', 2))
    .then([reserved('j1', 2)], 'a balance of 2 covers a cost of 2')
  const accepted = { email: 'sealed:v1:x', checks: ['syntax' as const], key_uuid: 'k1', queued_at: now }
  w([granted(2)])
    .when(reserve('j1', 2, R('j1'), { job: accepted }))
    .then([reservedEvent({ amount: 2, job: accepted })], 'a reservation carries the job it accepts')
  w([granted(14)])
    .when(reserve('c1', 14, 'r-c1', { batch_uuid: 'b1' }))
    .then([reservedEvent({ job_uuid: 'c1', reservation_uuid: 'r-c1', amount: 14, batch_uuid: 'b1' })], "a chunk's reservation names its batch")
  w([granted(2), reserved('j1', 2)])
    .when(reserve('j2', 1))
    .thenRejects('submit_job.insufficient_tokens', 402, 'held tokens cannot be reserved twice: 402 when short')
  w([granted(1)])
    .when(reserve('j1', 7))
    .thenRejects('submit_job.insufficient_tokens', 402, 'a wallet of 1 cannot reserve 7 (402)')
  w([granted(2), reserved('j1', 2)])
    .when(reserve('j1', 2, 'r-other'))
    .thenNothing('while a job holds a reservation, another one for it is nothing')
})

t.test('CaptureTokens and ReleaseTokens', async t => {
  const w = spec(t, wallet)
  w([granted(5), reserved('j1', 3)])
    .when(capture('j1', 3))
    .then([captured('j1', 3)], 'a firm verdict captures the cost')
  w([granted(5), reserved('j1', 3)])
    .when(capture('j1', 1))
    .then([captured('j1', 1), released('j1', 2, 'unused_checks')], 'a partial capture gives back the rest')
  w([granted(5), reserved('j1', 3)])
    .when(capture('j1', 0))
    .then([released('j1', 3, 'not_charged')], 'a capture of nothing releases all of it (verdict unknown)')
  w([granted(5), reserved('j1', 3)])
    .when(capture('j1', 99))
    .then([captured('j1', 3)], 'never more than was reserved')
  w([granted(5), reserved('j1', 3)])
    .when(capture('j1', 2.5))
    .thenRejects('wallet.invalid_amount', 400, 'a fractional charge is refused, never rounded down (tokens are whole)')
  w([granted(5), reserved('j1', 3)])
    .when(capture('j1', -1))
    .thenRejects('wallet.invalid_amount', 400, 'a negative charge is refused')
  w([granted(5), reserved('j1', 3)])
    .when(capture('j1', 3, 'r-other'))
    .thenNothing('a capture names the reservation it settles')
  w([granted(5), reserved('j1', 3)])
    .when(capture('j1', 3, null))
    .then([captured('j1', 3)], 'a job queued before reservations had names settles whichever is open')
  const legacy = { type: 'TokensReserved' as const, data: { user_uuid: U, job_uuid: 'j1', amount: 3, reserved_at: now } }
  w([granted(5), legacy])
    .when(capture('j1', 3, 'j1'))
    .then([captured('j1', 3, 'j1')], 'a reservation written before it had a uuid is named by its job')
  const settledOnce: WalletEvent[] = [granted(5), reserved('j1', 3), captured('j1', 3)]
  w(settledOnce).when(capture('j1', 3)).thenNothing('capture is idempotent')
  w(settledOnce).when(release('j1')).thenNothing('a captured job is not released')
  w(settledOnce)
    .when(reserve('j1', 1, 'r-again'))
    .then([reserved('j1', 1, 'r-again')], 'a second reservation for a settled job is made (the intake process manager releases it)')
  w([...settledOnce, reserved('j1', 1, 'r-again')])
    .when(capture('j1', 3))
    .thenNothing('settling the job again does not touch the second reservation')
  w([...settledOnce, reserved('j1', 1, 'r-again')])
    .when(release('j1', 'r-again', 'duplicate_reservation'))
    .then([released('j1', 1, 'duplicate_reservation', 'r-again')], 'the duplicate reservation is released by its uuid')
  w([granted(5), reserved('j1', 3)])
    .when(release('j1'))
    .then([released('j1', 3, 'job_failed')], 'a failed job releases its reservation')
  w([granted(5), reserved('j1', 3)])
    .when(release('j1', null))
    .then([released('j1', 3, 'job_failed')], 'a release without a reservation uuid releases whichever is open')
  w([granted(5), reserved('j1', 3)])
    .when(release('j1', 'r-other'))
    .thenNothing('a release names the reservation it settles')
  w([granted(5)])
    .when(release('j9'))
    .thenNothing('a job without a reservation: nothing')
  w([granted(5), reserved('j1', 3), released('j1', 3, 'x')]).thenState(
    s => [s.balance, s.reserved.size],
    [5, 0],
    'a release gives the tokens back and leaves no trace of the job'
  )
})

t.test('states are values: a later event leaves an earlier state as it was', async t => {
  // The oracle: the history itself (which jobs it reserved and has not settled yet).
  const s1 = [granted(10), reserved('j1', 3)].reduce(wallet.evolve, wallet.initialState())
  const s2 = wallet.evolve(s1, reserved('j2', 4))
  const s3 = wallet.evolve(s2, captured('j1', 3))
  const s4 = wallet.evolve(s3, released('j2', 4, 'job_failed'))
  const open = (s: typeof s1): string[] => [...s.reserved.keys()].sort()
  t.same([open(s1), open(s2), open(s3), open(s4)], [['j1'], ['j1', 'j2'], ['j2'], []], 'each state holds the reservations open at its point of the history')
  t.same([s1.balance, s2.balance, s3.balance, s4.balance], [7, 3, 3, 7])
  t.same(s2.reserved.get('j1'), { reservation_uuid: R('j1'), amount: 3 }, 'the capture after it did not change it')
})

t.test('closing the books: the state carried forward is exactly the state before it', async t => {
  const w = spec(t, wallet)
  const history: WalletEvent[] = [granted(10), reserved('j1', 3), reserved('j2', 4), captured('j1', 3)]
  const before = history.reduce(wallet.evolve, wallet.initialState())
  const closing = wallet.closeBooks(before, now)
  t.same(
    closing,
    booksClosed({ balance: 3, reservations: [{ job_uuid: 'j2', reservation_uuid: R('j2'), amount: 4 }], recent_grants: ['g-1'] }),
    "10 granted, 7 reserved: 3 left and j2's 4 held"
  )
  const reopened = wallet.evolve(wallet.initialState(), closing)
  t.same(
    [reopened.balance, [...reopened.reserved], reopened.recent_grants],
    [before.balance, [...before.reserved], before.recent_grants],
    'the closing alone restores the state'
  )
  w([closing])
    .when(capture('j2', 4))
    .then([captured('j2', 4)], 'a reservation carried forward is settled after the closing')
  w([closing]).when(grant('g-1', 100)).thenNothing('grant idempotency carries forward')
  w([closing]).when(reserve('j3', 4)).thenRejects('submit_job.insufficient_tokens', 402, 'the balance carried forward bounds the next reservation')
  t.equal(wallet.snapshot.every, wallet.CLOSE_BOOKS_EVERY, 'the books close every CLOSE_BOOKS_EVERY events')
})

t.test('wallet audit: a replay checks every closing of the books', async t => {
  const history: WalletEvent[] = [granted(10), reserved('j1', 3), reserved('j2', 4)]
  const closing = wallet.closeBooks(history.reduce(wallet.evolve, wallet.initialState()), now)
  const sound = auditWallet([...history, closing, captured('j1', 3)])
  t.same(sound.discrepancies, [], 'a sound ledger has no discrepancy')
  t.same([sound.state.balance, sound.granted, sound.reserved, sound.captured, sound.closings], [3, 10, 7, 3, 1], 'the sums over the whole ledger')
  const forged = { ...closing, data: { ...closing.data, balance: 999 } }
  t.match(
    auditWallet([...history, forged]).discrepancies,
    [/books closed at 999 tokens, the ledger before it makes 3/],
    'a closing with another balance is found'
  )
  t.match(auditWallet([granted(1), captured('jx', 1, 'r')]).discrepancies, [/settles no open reservation/], 'a capture of nothing reserved is found')
  t.match(
    auditWallet([granted(5), reserved('j1', 3), captured('j1', 5)]).discrepancies,
    [/of 5 tokens exceeds the 3 held for job j1/],
    'a capture of more than was held is found'
  )
  t.match(auditWallet([granted(1), reserved('j1', 3)]).discrepancies, [/balance below zero \(-2\)/], 'a balance below zero is found')
})
