import t from 'tap'
import * as wallet from '../src/domain/wallet/decider.ts'
import * as job from '../src/domain/job/decider.ts'
import * as apikey from '../src/domain/apikey/decider.ts'
import * as agent from '../src/domain/agent/decider.ts'
import type { ApiKeyEvent } from '../src/domain/apikey/events.ts'
import type { AgentEvent } from '../src/domain/agent/events.ts'
import * as session from '../src/domain/session/decider.ts'
import type { SessionEvent } from '../src/domain/session/events.ts'
import type { WalletEvent } from '../src/domain/wallet/events.ts'
import type { JobEvent } from '../src/domain/job/events.ts'
import { resolveChecks, costOf } from '../src/domain/checks.ts'
import { spec } from './support/decider-spec.ts'
import * as userDecider from '../src/domain/user/decider.ts'
import type { UserEvent } from '../src/domain/user/events.ts'
import * as subscription from '../src/domain/subscription/decider.ts'
import type { Subscription, SubscriptionEvent } from '../src/domain/subscription/events.ts'
import { auditWallet } from '../src/domain/wallet/audit.ts'

const now = '2026-11-22T10:00:00.000Z'
const U = 'u-1'
const granted = (amount: number, grant = 'g-1'): WalletEvent => ({ type: 'TokensGranted', data: { user_uuid: U, grant_uuid: grant, amount, source: 'plan', plan: 'free', reason: 'Free plan', granted_at: now } })
const reserved = (job: string, amount: number, reservation = `r-${job}`): WalletEvent => ({ type: 'TokensReserved', data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, amount, reserved_at: now } })

t.test('wallet', async t => {
  const w = spec(t, wallet)
  const R = (job: string): string => `r-${job}`
  const reserve = (job: string, amount: number, reservation = R(job)) => ({ type: 'ReserveTokens' as const, data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, amount, now } })
  const capture = (job: string, amount: number, reservation: string | null = R(job)) => ({ type: 'CaptureTokens' as const, data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, amount, now } })
  const release = (job: string, reservation: string | null = R(job), reason = 'job_failed') => ({ type: 'ReleaseTokens' as const, data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, reason, now } })
  const captured = (job: string, amount: number): WalletEvent => ({ type: 'TokensCaptured', data: { user_uuid: U, job_uuid: job, reservation_uuid: R(job), amount, captured_at: now } })
  const released = (job: string, amount: number, reason: string, reservation = R(job)): WalletEvent => ({ type: 'TokensReleased', data: { user_uuid: U, job_uuid: job, reservation_uuid: reservation, amount, reason, released_at: now } })
  const grant = (id: string, amount: number) => ({ type: 'GrantTokens' as const, data: { user_uuid: U, grant_uuid: id, amount, source: 'plan' as const, plan: 'free', reason: 'Free plan', now } })
  w([]).when(grant('g-1', 100)).then([granted(100)])
  w([granted(100)]).when(grant('g-1', 100)).then([], 'a grant is applied once')
  w([]).when({ type: 'GrantTokens', data: { user_uuid: U, grant_uuid: 'g-2', amount: 0, source: 'operator', plan: null, reason: 'x', now } }).thenThrows('wallet.invalid_amount')
  w([]).when(reserve('j1', 1.5)).thenThrows('wallet.invalid_amount', 'a fractional reservation')
  w([granted(2)]).when(reserve('j1', 2)).then([reserved('j1', 2)])
  const accepted = { email: 'sealed:v1:x', checks: ['syntax' as const], key_uuid: 'k1', queued_at: now }
  w([granted(2)]).when({ type: 'ReserveTokens', data: { ...reserve('j1', 2).data, job: accepted } })
    .then([{ type: 'TokensReserved', data: { user_uuid: U, job_uuid: 'j1', reservation_uuid: R('j1'), amount: 2, reserved_at: now, job: accepted } }], 'a reservation carries the job it accepts')
  w([granted(2), reserved('j1', 2)]).when(reserve('j2', 1)).thenThrows('submit_job.insufficient_tokens', 'held tokens cannot be reserved twice')
  w([granted(2), reserved('j1', 2)]).when(reserve('j1', 2, 'r-other')).then([], 'while a job holds a reservation, another one for it is nothing')
  w([granted(5), reserved('j1', 3)]).when(capture('j1', 3)).then([captured('j1', 3)])
  w([granted(5), reserved('j1', 3)]).when(capture('j1', 1)).then([captured('j1', 1), released('j1', 2, 'unused_checks')], 'a partial capture gives back the rest')
  w([granted(5), reserved('j1', 3)]).when(capture('j1', 0)).then([released('j1', 3, 'not_charged')])
  w([granted(5), reserved('j1', 3)]).when(capture('j1', 99)).then([captured('j1', 3)], 'never more than was reserved')
  w([granted(5), reserved('j1', 3)]).when(capture('j1', 3, 'r-other')).then([], 'a capture names the reservation it settles')
  w([granted(5), reserved('j1', 3)]).when(capture('j1', 3, null)).then([captured('j1', 3)], 'a job queued before reservations had names settles whichever is open')
  const settledOnce: WalletEvent[] = [granted(5), reserved('j1', 3), captured('j1', 3)]
  w(settledOnce).when(capture('j1', 3)).then([], 'capture is idempotent')
  w(settledOnce).when(release('j1')).then([], 'a captured job is not released')
  w(settledOnce).when(reserve('j1', 1, 'r-again')).then([{ type: 'TokensReserved', data: { user_uuid: U, job_uuid: 'j1', reservation_uuid: 'r-again', amount: 1, reserved_at: now } }], 'a second reservation for a settled job is made (the intake process manager releases it)')
  w([...settledOnce, reserved('j1', 1, 'r-again')]).when(capture('j1', 3)).then([], 'settling the job again does not touch the second reservation')
  w([...settledOnce, reserved('j1', 1, 'r-again')]).when(release('j1', 'r-again', 'duplicate_reservation')).then([released('j1', 1, 'duplicate_reservation', 'r-again')])
  w([granted(5), reserved('j1', 3)]).when(release('j1')).then([released('j1', 3, 'job_failed')])
  const folded = [granted(5), reserved('j1', 3), released('j1', 3, 'x')].reduce(wallet.evolve, wallet.initialState())
  t.equal(folded.balance, 5, 'a release gives the tokens back')
  t.equal(folded.reserved.size, 0, 'and leaves no trace of the job')

  // Closing the books: the state carried forward is exactly the state before it.
  const history: WalletEvent[] = [granted(10), reserved('j1', 3), reserved('j2', 4), captured('j1', 3)]
  const before = history.reduce(wallet.evolve, wallet.initialState())
  const closing = wallet.closeBooks(before, now)
  t.same(closing.data, { user_uuid: U, balance: 3, reservations: [{ job_uuid: 'j2', reservation_uuid: R('j2'), amount: 4 }], recent_grants: ['g-1'], closed_at: now })
  const reopened = wallet.evolve(wallet.initialState(), closing)
  t.same([reopened.balance, [...reopened.reserved], reopened.recent_grants], [before.balance, [...before.reserved], before.recent_grants], 'the closing alone restores the state')
  w([closing]).when(capture('j2', 4)).then([captured('j2', 4)], 'a reservation carried forward is settled after the closing')
  w([closing]).when(grant('g-1', 100)).then([], 'grant idempotency carries forward')
  t.equal(wallet.snapshot.every, wallet.CLOSE_BOOKS_EVERY)
  const grants = Array.from({ length: wallet.RECENT_GRANTS + 10 }, (_, i) => granted(1, `g-${i}`))
  t.equal(grants.reduce(wallet.evolve, wallet.initialState()).recent_grants.length, wallet.RECENT_GRANTS, 'the grant window is bounded')
})

t.test('wallet audit: a replay checks every closing of the books', async t => {
  const history: WalletEvent[] = [granted(10), reserved('j1', 3), reserved('j2', 4)]
  const closing = wallet.closeBooks(history.reduce(wallet.evolve, wallet.initialState()), now)
  const sound = auditWallet([...history, closing, { type: 'TokensCaptured', data: { user_uuid: U, job_uuid: 'j1', reservation_uuid: 'r-j1', amount: 3, captured_at: now } }])
  t.same(sound.discrepancies, [])
  t.same([sound.state.balance, sound.granted, sound.reserved, sound.captured, sound.closings], [3, 10, 7, 3, 1])
  const forged = { ...closing, data: { ...closing.data, balance: 999 } }
  t.match(auditWallet([...history, forged]).discrepancies, [/books closed at 999 tokens, the ledger before it makes 3/])
  t.match(auditWallet([granted(1), { type: 'TokensCaptured', data: { user_uuid: U, job_uuid: 'jx', reservation_uuid: 'r', amount: 1, captured_at: now } }]).discrepancies, [/settles no open reservation/])
})

t.test('job', async t => {
  const j = spec(t, job)
  const queued: JobEvent = { type: 'JobQueued', data: { job_uuid: 'j1', user_uuid: U, email: 'sealed:v1:x', checks: ['syntax', 'dns', 'smtp'], cost: 1, environment: 'live', key_uuid: null, queued_at: now } }
  const completed: JobEvent = { type: 'JobCompleted', data: { job_uuid: 'j1', user_uuid: U, verdict: 'valid', reason: 'accepted_email', score: 100, charge: 1, result: {}, completed_at: now } }
  j([]).when({ type: 'QueueJob', data: queued.data as any }).then([queued])
  j([queued]).when({ type: 'QueueJob', data: queued.data as any }).then([], 'queueing a job that exists is nothing (submission and intake both may)')
  j([queued]).when({ type: 'CompleteJob', data: { job_uuid: 'j1', verdict: 'valid', reason: 'accepted_email', score: 100, charge: 1, result: {}, completed_at: now } }).then([completed])
  j([queued, completed]).when({ type: 'CompleteJob', data: { job_uuid: 'j1', verdict: 'invalid', reason: 'x', score: 0, charge: 1, result: {}, completed_at: now } }).then([], 'a terminal job is not completed twice')
  j([queued, completed]).when({ type: 'FailJob', data: { job_uuid: 'j1', error: 'x', failed_at: now } }).then([])
  j([]).when({ type: 'CompleteJob', data: { job_uuid: 'j1', verdict: 'valid', reason: 'accepted_email', score: 100, charge: 1, result: {}, completed_at: now } }).thenThrows('job.not_found')
  t.equal([queued, completed].reduce(job.evolve, job.initialState()).status, 'completed')
})

t.test('api keys of an account: the plan cap and what the creating credential holds', async t => {
  const k = spec(t, apikey)
  const data = (key: string) => ({ key_uuid: key, user_uuid: U, name: 'n', environment: 'live' as const, key_hash: `h${key}`, key_prefix: 'svc_abcd', scopes: ['results:read' as const], enabled_checks: ['syntax' as const], rate_limit_per_minute: 60, created_at: now })
  const all = { scopes: ['results:read', 'webhooks:create'], enabled_checks: ['syntax', 'dns'] }
  const created = (key: string): ApiKeyEvent => ({ type: 'ApiKeyCreated', data: data(key) })
  const create = (key: string, max = 2, granter = all) => ({ type: 'CreateApiKey' as const, data: { ...data(key), max_keys: max, granter } })
  k([]).when(create('k1')).then([created('k1')])
  k([created('k1'), created('k2')]).when(create('k3')).thenThrows('create_api_key.limit_reached')
  const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { key_uuid: 'k1', user_uuid: U, reason: 'revoked', revoked_at: now } }
  k([created('k1'), created('k2'), revoked]).when(create('k3')).then([created('k3')], 'a revoked key frees its place')
  k([]).when(create('k1', 2, { scopes: ['webhooks:create'], enabled_checks: ['syntax'] })).thenThrows('create_api_key.scope_not_held')
  k([]).when(create('k1', 2, { scopes: ['results:read'], enabled_checks: ['dns'] })).thenThrows('create_api_key.check_not_held')
  k([created('k1')]).when(create('k1')).thenThrows('create_api_key.exists')
  k([created('k1')]).when({ type: 'RevokeApiKey', data: { key_uuid: 'k1', reason: 'revoked', now } }).then([revoked])
  k([created('k1'), revoked]).when({ type: 'RevokeApiKey', data: { key_uuid: 'k1', reason: 'revoked', now: '2027-01-01T00:00:00.000Z' } }).then([], 'revoking again keeps the first revoked_at')
  k([created('k1')]).when({ type: 'RevokeApiKey', data: { key_uuid: 'k-of-another-account', reason: 'revoked', now } }).then([])
  k([created('k1'), created('k2'), revoked]).when({ type: 'RevokeAllApiKeys', data: { reason: 'account_deleted', now } })
    .then([{ type: 'ApiKeyRevoked', data: { key_uuid: 'k2', user_uuid: U, reason: 'account_deleted', revoked_at: now } }])
  const snap = apikey.takeSnapshot([created('k1'), created('k2'), revoked].reduce(apikey.evolve, apikey.initialState()), now)
  k([snap]).when(create('k3')).then([created('k3')], 'the cap counts what the snapshot carries')
  k([snap]).when(create('k4', 1)).thenThrows('create_api_key.limit_reached')
})

t.test('agents of an account: the plan cap and scopes', async t => {
  const a = spec(t, agent)
  const data = (id: string) => ({ agent_uuid: id, user_uuid: U, name: 'n', scopes: ['results:read' as const], token_hash: `h${id}`, token_prefix: 'sva_abcd', created_at: now })
  const created = (id: string): AgentEvent => ({ type: 'AgentCreated', data: data(id) })
  const create = (id: string, max = 2, allowed: string[] = ['results:read']) => ({ type: 'CreateAgent' as const, data: { ...data(id), max_agents: max, plan_scopes: allowed as any } })
  a([]).when(create('a1')).then([created('a1')])
  a([created('a1'), created('a2')]).when(create('a3')).thenThrows('create_agent.limit_reached')
  a([]).when(create('a1', 2, ['email:verify:single'])).thenThrows('create_agent.scope_not_allowed')
  const revoked: AgentEvent = { type: 'AgentRevoked', data: { agent_uuid: 'a1', user_uuid: U, reason: 'revoked', revoked_at: now } }
  a([created('a1')]).when({ type: 'RevokeAgent', data: { agent_uuid: 'a1', reason: 'revoked', now } }).then([revoked])
  a([created('a1'), revoked]).when({ type: 'RevokeAgent', data: { agent_uuid: 'a1', reason: 'revoked', now } }).then([], 'idempotent')
  a([created('a1'), revoked, created('a2')]).when(create('a3')).then([created('a3')])
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
  const ok = { active: true, sessions_valid_from: null }
  const started: SessionEvent = { type: 'SessionStarted', data: { session_uuid: 's1', user_uuid: U, refresh_hash: 'h1', expires_at: '2026-12-22T10:00:00.000Z', started_at: now, method: 'password' } }
  const refreshed: SessionEvent = { type: 'SessionRefreshed', data: { session_uuid: 's1', user_uuid: U, refresh_hash: 'h2', expires_at: '2026-12-22T10:00:00.000Z', refreshed_at: now } }
  s([started]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h2', expires_at: '2026-12-22T10:00:00.000Z', now, account: ok } }).then([refreshed])
  s([started, refreshed]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h3', expires_at: now, now, account: ok } })
    .then([{ type: 'SessionRevoked', data: { session_uuid: 's1', user_uuid: U, reason: 'refresh_token_reuse', revoked_at: now } }], 'a spent token revokes the session')
  s([started]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'nope', new_hash: 'h3', expires_at: now, now, account: ok } }).thenThrows('refresh.invalid_token')
  s([started]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h3', expires_at: now, now: '2027-01-01T00:00:00.000Z', account: ok } }).thenThrows('refresh.invalid_token', 'expired')
  const revoked: SessionEvent = { type: 'SessionRevoked', data: { session_uuid: 's1', user_uuid: U, reason: 'logout', revoked_at: now } }
  s([started, revoked]).when({ type: 'RevokeSession', data: { session_uuid: 's1', reason: 'logout', now } }).then([], 'logout is idempotent')
  s([started]).when({ type: 'RevokeSession', data: { session_uuid: 's1', reason: 'logout', presented_hash: 'not h1', now } }).then([], 'a logout without the current refresh token changes nothing')
  s([started]).when({ type: 'RevokeSession', data: { session_uuid: 's1', reason: 'logout', presented_hash: 'h1', now } }).then([revoked], 'with it, the session ends')
  // Absolute lifetime (ASVS 5.0 V7.3.2): refreshed every day, a session still ends SESSION_MAX_LIFETIME_MS after it started.
  const day = (n: number): string => new Date(Date.parse(now) + n * 86_400_000).toISOString()
  const lateRefresh: SessionEvent = { type: 'SessionRefreshed', data: { session_uuid: 's1', user_uuid: U, refresh_hash: 'h9', expires_at: day(119), refreshed_at: day(89) } }
  s([started, lateRefresh]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h9', new_hash: 'h10', expires_at: day(120), now: day(90), account: ok } })
    .then([{ type: 'SessionRevoked', data: { session_uuid: 's1', user_uuid: U, reason: 'lifetime_reached', revoked_at: day(90) } }], 'past its lifetime it is revoked')
  s([started, lateRefresh]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h9', new_hash: 'h10', expires_at: day(119), now: day(89), account: ok } })
    .then([{ type: 'SessionRefreshed', data: { session_uuid: 's1', user_uuid: U, refresh_hash: 'h10', expires_at: day(90), refreshed_at: day(89) } }], 'a refresh never reaches past the lifetime')
  s([started]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h3', expires_at: now, now, account: { active: false, sessions_valid_from: now } } })
    .then([{ type: 'SessionRevoked', data: { session_uuid: 's1', user_uuid: U, reason: 'account_inactive', revoked_at: now } }], 'a banned account\'s refresh revokes the session')
  s([started]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h3', expires_at: now, now, account: { active: true, sessions_valid_from: '2026-11-22T11:00:00.000Z' } } })
    .then([{ type: 'SessionRevoked', data: { session_uuid: 's1', user_uuid: U, reason: 'account_inactive', revoked_at: now } }], 'a session started before a ban stays void after the unban')
  const many: SessionEvent[] = Array.from({ length: session.SPENT_MEMORY + 5 }, (_, i) => ({ type: 'SessionRefreshed', data: { session_uuid: 's1', user_uuid: U, refresh_hash: `n${i}`, expires_at: '2026-12-22T10:00:00.000Z', refreshed_at: now } }))
  const long = [started, ...many].reduce(session.evolve, session.initialState())
  t.equal(long.status !== 'none' && long.spent.length, session.SPENT_MEMORY, 'spent tokens remembered are bounded')
  s([started, revoked]).when({ type: 'RefreshSession', data: { session_uuid: 's1', presented_hash: 'h1', new_hash: 'h3', expires_at: now, now, account: ok } }).thenThrows('refresh.invalid_token')
})

t.test('subscription', async t => {
  const s = spec(t, subscription)
  const sub = (over: Partial<Subscription> = {}): Subscription => ({ user_uuid: U, plan: 'pro', cycle: 'yearly', status: 'active', current_period_end: '2027-11-22T10:00:00.000Z', cancel_at_period_end: false, stripe_customer: 'cus_1', stripe_subscription: 'sub_1', stripe_as_of: 100, ...over })
  const set = (over: Record<string, unknown> = {}) => ({ type: 'SetPlan' as const, data: { user_uuid: U, plan: 'pro', cycle: 'yearly' as const, status: 'active' as const, current_period_end: '2027-11-22T10:00:00.000Z', cancel_at_period_end: false, stripe_subscription: 'sub_1', stripe_customer: 'cus_1', source: 'billing' as const, as_of: 100, now, ...over } })
  const started: SubscriptionEvent = { type: 'PlanStarted', data: { user_uuid: U, subscription: sub(), source: 'billing', at: now } }
  s([]).when(set()).then([started], 'from Free, a paid plan starts')
  s([started]).when(set({ as_of: 101 })).then([], 'Stripe repeating the same state changes nothing')
  s([started]).when(set({ plan: 'business', cycle: 'monthly', as_of: 102 })).then([{ type: 'PlanChanged', data: { user_uuid: U, subscription: sub({ plan: 'business', cycle: 'monthly', stripe_as_of: 102 }), previous_plan: 'pro', source: 'billing', at: now } }])
  s([started]).when(set({ plan: 'business', as_of: 99 })).then([], 'an event older than the latest applied changes nothing')
  s([started]).when({ type: 'EndPlan', data: { user_uuid: U, stripe_subscription: 'sub_other', source: 'billing', as_of: 103, now } }).then([], 'another subscription\'s end')
  s([started]).when({ type: 'EndPlan', data: { user_uuid: U, stripe_subscription: 'sub_1', source: 'billing', as_of: 103, now } })
    .then([{ type: 'PlanEnded', data: { user_uuid: U, subscription: { ...subscription.freeSubscription(U, 'cus_1'), stripe_as_of: 103 }, previous_plan: 'pro', source: 'billing', at: now } }])
  s([]).when({ type: 'EndPlan', data: { user_uuid: U, stripe_subscription: null, source: 'operator', as_of: null, now } }).then([], 'Free cannot end')
  s([]).when(set({ current_period_end: 'next tuesday' })).thenThrows('subscription.invalid_period')
  s([started]).when({ type: 'LinkCustomer', data: { user_uuid: U, stripe_customer: 'cus_1', now } }).then([], 'the same customer')
})

t.test('api keys: update', async t => {
  const k = spec(t, apikey)
  const created: ApiKeyEvent = { type: 'ApiKeyCreated', data: { key_uuid: 'k1', user_uuid: U, name: 'n', environment: 'live', key_hash: 'h', key_prefix: 'svc_abcd', scopes: ['results:read'], enabled_checks: ['syntax', 'dns'], rate_limit_per_minute: 60, created_at: now } }
  const granter = { scopes: ['api_keys:read'], enabled_checks: ['syntax', 'dns', 'smtp'] }
  const update = (over: Record<string, unknown>) => ({ type: 'UpdateApiKey' as const, data: { key_uuid: 'k1', plan_checks: ['syntax', 'dns', 'smtp'] as const, granter, now, ...over } })
  k([created]).when(update({ name: 'renamed' })).then([{ type: 'ApiKeyUpdated', data: { key_uuid: 'k1', user_uuid: U, name: 'renamed', updated_at: now } }])
  k([created]).when(update({ enabled_checks: ['syntax', 'dns'] })).then([], 'the same checks change nothing')
  k([created]).when(update({ enabled_checks: ['syntax', 'smtp'] })).then([{ type: 'ApiKeyUpdated', data: { key_uuid: 'k1', user_uuid: U, enabled_checks: ['syntax', 'smtp'], updated_at: now } }])
  k([created]).when(update({ enabled_checks: ['catch_all'] })).thenThrows('update_api_key.check_not_allowed')
  k([created]).when(update({ enabled_checks: ['smtp'], plan_checks: ['syntax', 'dns', 'smtp'], granter: { scopes: [], enabled_checks: ['syntax'] } })).thenThrows('update_api_key.check_not_held')
  k([created, { type: 'ApiKeyRevoked', data: { key_uuid: 'k1', user_uuid: U, reason: 'r', revoked_at: now } }]).when(update({ name: 'x' })).thenThrows('update_api_key.revoked')
  k([]).when(update({ name: 'x' })).thenThrows('update_api_key.revoked', 'another account\'s key is not in this stream')
})

t.test('user: registration renewed, passwords counted before they are judged, unconfirmed expiry', async t => {
  const u = spec(t, userDecider)
  const registered: UserEvent = { type: 'UserRegistered', data: { user_uuid: U, email: 'sealed:e', password_hash: 'attacker', locale: 'en', registered_at: now } }
  const code1: UserEvent = { type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: 'c1', code: 'sealed:c1', expires_at: '2026-11-22T10:30:00.000Z', issued_at: now } }
  const later = '2026-11-22T10:00:10.000Z'
  const register = { type: 'RegisterUser' as const, data: { user_uuid: U, email_sealed: 'sealed:e', password_hash: 'owner', locale: 'fr', code_hash: 'c2', code_sealed: 'sealed:c2', code_expires_at: '2026-11-22T10:30:10.000Z', now: later } }
  u([registered, code1]).when(register).then([
    { type: 'RegistrationRenewed', data: { user_uuid: U, password_hash: 'owner', locale: 'fr', registered_at: later } },
    { type: 'ConfirmationCodeIssued', data: { user_uuid: U, code_hash: 'c2', code: 'sealed:c2', expires_at: '2026-11-22T10:30:10.000Z', issued_at: later } }
  ], 'registering an unconfirmed address again replaces its password and mails a new code (within the cooldown too)')
  const renewed: UserEvent = { type: 'RegistrationRenewed', data: { user_uuid: U, password_hash: 'owner', locale: 'fr', registered_at: later } }
  u([registered, code1, renewed]).when({ type: 'ConfirmUser', data: { code_hash: 'c1', now: later } }).then([], 'the earlier code is void: it confirms nothing')
  const weekLater = new Date(Date.parse(now) + userDecider.UNCONFIRMED_TTL_MS).toISOString()
  u([registered]).when({ type: 'IssueConfirmationCode', data: { code_hash: 'c3', code_sealed: 's', expires_at: weekLater, now: weekLater } }).then([], 'an expired registration gets no code')
  const confirmed: UserEvent = { type: 'UserConfirmed', data: { user_uuid: U, confirmed_at: now } }
  u([registered, code1, confirmed]).when(register).thenThrows('register_user.already_registered', 'a confirmed account is never registered again')
  const start = { type: 'StartPasswordCheck' as const, data: { operation: 'login', now } }
  const counted: UserEvent = { type: 'PasswordCheckStarted', data: { user_uuid: U, operation: 'login', started_at: now } }
  u([registered, confirmed]).when(start).then([counted], 'an attempt is counted before it is judged')
  const four = Array.from({ length: userDecider.LOGIN_FAILURES_BEFORE_LOCK - 1 }, () => counted)
  u([registered, confirmed, ...four]).when(start).then([counted], 'the threshold\'s last one is still judged')
  u([registered, confirmed, ...four, counted]).when(start).thenThrows('login.locked', 'then the account is locked')
  u([registered, confirmed, ...four, counted]).when({ type: 'StartPasswordCheck', data: { operation: 'change_email', now } }).thenThrows('change_email.locked', 'for every current-password check')
  const quarterHour = new Date(Date.parse(now) + userDecider.LOGIN_LOCK_MS).toISOString()
  u([registered, confirmed, ...four, counted]).when({ type: 'StartPasswordCheck', data: { operation: 'login', now: quarterHour } }).then([{ type: 'PasswordCheckStarted', data: { user_uuid: U, operation: 'login', started_at: quarterHour } }], 'until the lock time has passed')
  u([registered, confirmed, counted]).when({ type: 'RecordLogin', data: { succeeded: true, now } }).then([{ type: 'LoginSucceeded', data: { user_uuid: U, succeeded_at: now } }], 'a success clears the count')
  u([registered, confirmed, counted]).when({ type: 'RecordLogin', data: { succeeded: false, now } }).then([], 'a failure was counted already')
})
