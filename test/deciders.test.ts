import t from 'tap'
import * as wallet from '../src/domain/wallet/decider.ts'
import * as job from '../src/domain/job/decider.ts'
import * as user from '../src/domain/user/decider.ts'
import * as apikey from '../src/domain/apikey/decider.ts'
import * as session from '../src/domain/session/decider.ts'
import type { SessionEvent } from '../src/domain/session/events.ts'
import type { WalletEvent } from '../src/domain/wallet/events.ts'
import type { JobEvent } from '../src/domain/job/events.ts'
import type { UserEvent } from '../src/domain/user/events.ts'
import { resolveChecks, costOf } from '../src/domain/checks.ts'
import { spec } from './support/decider-spec.ts'

const now = '2026-11-22T10:00:00.000Z'
const U = 'u-1'
const granted = (amount: number, grant = 'g-1'): WalletEvent => ({ type: 'TokensGranted', data: { user_uuid: U, grant_uuid: grant, amount, source: 'plan', plan: 'free', reason: 'Free plan', granted_at: now } })
const reserved = (job: string, amount: number): WalletEvent => ({ type: 'TokensReserved', data: { user_uuid: U, job_uuid: job, amount, reserved_at: now } })

t.test('wallet', async t => {
  const w = spec(t, wallet)
  w([]).when({ type: 'GrantTokens', data: { user_uuid: U, grant_uuid: 'g-1', amount: 100, source: 'plan', plan: 'free', reason: 'Free plan', now } }).then([granted(100)])
  w([granted(100)]).when({ type: 'GrantTokens', data: { user_uuid: U, grant_uuid: 'g-1', amount: 100, source: 'plan', plan: 'free', reason: 'Free plan', now } }).then([], 'a grant is applied once')
  w([]).when({ type: 'GrantTokens', data: { user_uuid: U, grant_uuid: 'g-2', amount: 0, source: 'operator', plan: null, reason: 'x', now } }).thenThrows('wallet.invalid_amount')
  w([granted(2)]).when({ type: 'ReserveTokens', data: { user_uuid: U, job_uuid: 'j1', amount: 2, now } }).then([reserved('j1', 2)])
  w([granted(2), reserved('j1', 2)]).when({ type: 'ReserveTokens', data: { user_uuid: U, job_uuid: 'j2', amount: 1, now } }).thenThrows('submit_job.insufficient_tokens', 'held tokens cannot be reserved twice')
  w([granted(2), reserved('j1', 2)]).when({ type: 'ReserveTokens', data: { user_uuid: U, job_uuid: 'j1', amount: 2, now } }).then([], 'reserving for the same job is idempotent')
  w([granted(5), reserved('j1', 3)]).when({ type: 'CaptureTokens', data: { user_uuid: U, job_uuid: 'j1', amount: 3, now } })
    .then([{ type: 'TokensCaptured', data: { user_uuid: U, job_uuid: 'j1', amount: 3, captured_at: now } }])
  w([granted(5), reserved('j1', 3)]).when({ type: 'CaptureTokens', data: { user_uuid: U, job_uuid: 'j1', amount: 1, now } }).then([
    { type: 'TokensCaptured', data: { user_uuid: U, job_uuid: 'j1', amount: 1, captured_at: now } },
    { type: 'TokensReleased', data: { user_uuid: U, job_uuid: 'j1', amount: 2, reason: 'unused_checks', released_at: now } }
  ], 'a partial capture gives back the rest')
  w([granted(5), reserved('j1', 3)]).when({ type: 'CaptureTokens', data: { user_uuid: U, job_uuid: 'j1', amount: 0, now } }).then([
    { type: 'TokensReleased', data: { user_uuid: U, job_uuid: 'j1', amount: 3, reason: 'not_charged', released_at: now } }
  ])
  w([granted(5), reserved('j1', 3)]).when({ type: 'CaptureTokens', data: { user_uuid: U, job_uuid: 'j1', amount: 99, now } })
    .then([{ type: 'TokensCaptured', data: { user_uuid: U, job_uuid: 'j1', amount: 3, captured_at: now } }], 'never more than was reserved')
  const settledOnce: WalletEvent[] = [granted(5), reserved('j1', 3), { type: 'TokensCaptured', data: { user_uuid: U, job_uuid: 'j1', amount: 3, captured_at: now } }]
  w(settledOnce).when({ type: 'CaptureTokens', data: { user_uuid: U, job_uuid: 'j1', amount: 3, now } }).then([], 'capture is idempotent')
  w(settledOnce).when({ type: 'ReleaseTokens', data: { user_uuid: U, job_uuid: 'j1', reason: 'x', now } }).then([], 'a captured job is not released')
  w(settledOnce).when({ type: 'ReserveTokens', data: { user_uuid: U, job_uuid: 'j1', amount: 1, now } }).then([], 'a settled job is not reserved again')
  w([granted(5), reserved('j1', 3)]).when({ type: 'ReleaseTokens', data: { user_uuid: U, job_uuid: 'j1', reason: 'job_failed', now } })
    .then([{ type: 'TokensReleased', data: { user_uuid: U, job_uuid: 'j1', amount: 3, reason: 'job_failed', released_at: now } }])
  const folded = [granted(5), reserved('j1', 3), { type: 'TokensReleased', data: { user_uuid: U, job_uuid: 'j1', amount: 3, reason: 'x', released_at: now } } as WalletEvent].reduce(wallet.evolve, wallet.initialState())
  t.equal(folded.balance, 5, 'a release gives the tokens back')
})

t.test('job', async t => {
  const j = spec(t, job)
  const queued: JobEvent = { type: 'JobQueued', data: { job_uuid: 'j1', user_uuid: U, email: 'sealed:v1:x', checks: ['syntax', 'dns', 'smtp'], cost: 1, environment: 'live', key_uuid: null, queued_at: now } }
  const completed: JobEvent = { type: 'JobCompleted', data: { job_uuid: 'j1', user_uuid: U, verdict: 'valid', reason: 'accepted_email', score: 100, charge: 1, result: {}, completed_at: now } }
  j([]).when({ type: 'QueueJob', data: queued.data as any }).then([queued])
  j([queued]).when({ type: 'QueueJob', data: queued.data as any }).thenThrows('submit_job.exists')
  j([queued]).when({ type: 'CompleteJob', data: { job_uuid: 'j1', verdict: 'valid', reason: 'accepted_email', score: 100, charge: 1, result: {}, completed_at: now } }).then([completed])
  j([queued, completed]).when({ type: 'CompleteJob', data: { job_uuid: 'j1', verdict: 'invalid', reason: 'x', score: 0, charge: 1, result: {}, completed_at: now } }).then([], 'a terminal job is not completed twice')
  j([queued, completed]).when({ type: 'FailJob', data: { job_uuid: 'j1', error: 'x', failed_at: now } }).then([])
  j([]).when({ type: 'CompleteJob', data: { job_uuid: 'j1', verdict: 'valid', reason: 'accepted_email', score: 100, charge: 1, result: {}, completed_at: now } }).thenThrows('job.not_found')
  t.equal([queued, completed].reduce(job.evolve, job.initialState()).status, 'completed')
})

t.test('user', async t => {
  const u = spec(t, user)
  const registered: UserEvent = { type: 'UserRegistered', data: { user_uuid: U, email: 'sealed:v1:x', password_hash: '$argon2id$x', locale: 'en', registered_at: now } }
  const issued: UserEvent = { type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: 'h1', code: 'sealed:v1:c', expires_at: '2026-11-22T10:30:00.000Z', issued_at: now } }
  u([]).when({ type: 'RegisterUser', data: { user_uuid: U, email_sealed: 'sealed:v1:x', password_hash: '$argon2id$x', locale: 'en', now } }).then([registered])
  u([registered]).when({ type: 'RegisterUser', data: { user_uuid: U, email_sealed: 'sealed:v1:y', password_hash: '$argon2id$y', locale: 'en', now } }).thenThrows('register_user.already_registered')
  const match = (h: string): boolean => h === 'h1'
  const miss = (): boolean => false
  u([registered, issued]).when({ type: 'ConfirmUser', data: { code_matches: match, now } }).then([{ type: 'UserConfirmed', data: { user_uuid: U, confirmed_at: now } }])
  u([registered, issued]).when({ type: 'ConfirmUser', data: { code_matches: miss, now } }).then([{ type: 'ConfirmationFailed', data: { user_uuid: U, failed_at: now } }])
  u([registered, issued]).when({ type: 'ConfirmUser', data: { code_matches: match, now: '2026-11-22T10:31:00.000Z' } })
    .then([{ type: 'ConfirmationFailed', data: { user_uuid: U, failed_at: '2026-11-22T10:31:00.000Z' } }], 'an expired code fails')
  const failures: UserEvent[] = Array.from({ length: user.MAX_CONFIRMATION_ATTEMPTS }, () => ({ type: 'ConfirmationFailed', data: { user_uuid: U, failed_at: now } }))
  u([registered, issued, ...failures]).when({ type: 'ConfirmUser', data: { code_matches: match, now } }).then([], 'a code stops working after too many wrong tries')
  const confirmed: UserEvent = { type: 'UserConfirmed', data: { user_uuid: U, confirmed_at: now } }
  u([registered, issued, confirmed]).when({ type: 'ConfirmUser', data: { code_matches: match, now } }).then([], 'a used code does not confirm again')
  u([registered, issued, confirmed]).when({ type: 'IssueConfirmationCode', data: { code_hash: 'h2', code_sealed: 'c', expires_at: now, now } }).then([], 'no code for a confirmed account')
})

t.test('api key', async t => {
  const k = spec(t, apikey)
  const data = { key_uuid: 'k1', user_uuid: U, name: 'n', environment: 'live' as const, key_hash: 'h', key_prefix: 'svc_abcd', scopes: [], enabled_checks: [], rate_limit_per_minute: 60, created_at: now }
  k([]).when({ type: 'CreateApiKey', data: { ...data, existing_keys: 0, max_keys: 5 } }).then([{ type: 'ApiKeyCreated', data }])
  k([]).when({ type: 'CreateApiKey', data: { ...data, existing_keys: 5, max_keys: 5 } }).thenThrows('create_api_key.limit_reached')
})

t.test('checks: dependencies and costs', async t => {
  t.same(resolveChecks(['smtp']), ['syntax', 'dns', 'smtp'])
  t.same(resolveChecks(['role']), ['syntax', 'role'])
  t.same(resolveChecks(['catch_all']), ['syntax', 'dns', 'smtp', 'catch_all'])
  t.same(resolveChecks(undefined), ['syntax', 'typo', 'disposable', 'role', 'free', 'dns', 'smtp', 'catch_all'])
  t.equal(costOf(resolveChecks(['smtp'])), 7, 'smtp needs dns: 6 + 1')
  t.equal(costOf(resolveChecks(undefined)), 10, 'a full verification costs 10 tokens')
  t.equal(costOf(['syntax', 'role']), 0)
})

t.test('session: rotation and reuse detection', async t => {
  const s = spec(t, session)
  const started: SessionEvent = { type: 'SessionStarted', data: { session_uuid: 's1', user_uuid: U, refresh_hash: 'h1', expires_at: '2026-12-22T10:00:00.000Z', started_at: now, method: 'password' } }
  const refreshed: SessionEvent = { type: 'SessionRefreshed', data: { session_uuid: 's1', user_uuid: U, refresh_hash: 'h2', expires_at: '2026-12-22T10:00:00.000Z', refreshed_at: now } }
  s([started]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h2', expires_at: '2026-12-22T10:00:00.000Z', now } }).then([refreshed])
  s([started, refreshed]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h3', expires_at: now, now } })
    .then([{ type: 'SessionRevoked', data: { session_uuid: 's1', user_uuid: U, reason: 'refresh_token_reuse', revoked_at: now } }], 'a spent token revokes the session')
  s([started]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'nope', new_hash: 'h3', expires_at: now, now } }).thenThrows('refresh.invalid_token')
  s([started]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h3', expires_at: now, now: '2027-01-01T00:00:00.000Z' } }).thenThrows('refresh.invalid_token', 'expired')
  const revoked: SessionEvent = { type: 'SessionRevoked', data: { session_uuid: 's1', user_uuid: U, reason: 'logout', revoked_at: now } }
  s([started, revoked]).when({ type: 'RevokeSession', data: { session_uuid: 's1', reason: 'logout', now } }).then([], 'logout is idempotent')
  s([started, revoked]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h3', expires_at: now, now } }).thenThrows('refresh.invalid_token')
})

t.test('user: resend cooldown and daily allowance; password reset', async t => {
  const u = spec(t, user)
  const registered: UserEvent = { type: 'UserRegistered', data: { user_uuid: U, email: 'sealed:v1:x', password_hash: '$argon2id$x', locale: 'en', registered_at: now } }
  const issuedAt = (iso: string): UserEvent => ({ type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: `h${iso}`, code: 'c', expires_at: '2026-11-23T00:00:00.000Z', issued_at: iso } })
  const issue = (at: string) => ({ type: 'IssueConfirmationCode' as const, data: { code_hash: 'hx', code_sealed: 'c', expires_at: '2026-11-23T00:00:00.000Z', now: at } })
  u([registered, issuedAt(now)]).when(issue('2026-11-22T10:00:30.000Z')).then([], 'within the cooldown: nothing')
  u([registered, issuedAt(now)]).when(issue('2026-11-22T10:01:00.000Z')).then([{ type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: 'hx', code: 'c', expires_at: '2026-11-23T00:00:00.000Z', issued_at: '2026-11-22T10:01:00.000Z' } }])
  const five = [0, 2, 4, 6, 8].map(m => issuedAt(`2026-11-22T1${m}:00:00.000Z`))
  u([registered, ...five]).when(issue('2026-11-22T20:00:00.000Z')).then([], 'the daily allowance is spent')
  u([registered, ...five]).when(issue('2026-11-23T10:30:00.000Z')).then([{ type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: 'hx', code: 'c', expires_at: '2026-11-23T00:00:00.000Z', issued_at: '2026-11-23T10:30:00.000Z' } }], 'a day later, allowed again')
  const confirmed: UserEvent = { type: 'UserConfirmed', data: { user_uuid: U, confirmed_at: now } }
  const requested: UserEvent = { type: 'PasswordResetRequested', data: { user_uuid: U, token_hash: 't1', token: 's', expires_at: '2026-11-22T10:30:00.000Z', requested_at: now } }
  u([registered, confirmed, requested]).when({ type: 'ResetPassword', data: { token_hash: 't1', password_hash: 'p2', now: '2026-11-22T10:10:00.000Z' } })
    .then([{ type: 'PasswordChanged', data: { user_uuid: U, password_hash: 'p2', reason: 'reset', changed_at: '2026-11-22T10:10:00.000Z' } }])
  u([registered, confirmed, requested]).when({ type: 'ResetPassword', data: { token_hash: 't1', password_hash: 'p2', now: '2026-11-22T10:31:00.000Z' } }).thenThrows('reset_password.invalid_token', 'expired')
  u([registered, confirmed, requested]).when({ type: 'ResetPassword', data: { token_hash: 'other', password_hash: 'p2', now } }).thenThrows('reset_password.invalid_token')
  u([registered, requested]).when({ type: 'RequestPasswordReset', data: { token_hash: 't2', token_sealed: 's', expires_at: now, now } }).then([], 'unconfirmed accounts get no reset')
})
