import t from 'tap'
import * as job from '../../../src/domain/job/decider.ts'
import type { JobCommand } from '../../../src/domain/job/decider.ts'
import type { JobCompleted, JobDeferred, JobFailed, JobQueued } from '../../../src/domain/job/events.ts'
import { costOf, resolveChecks } from '../../../src/domain/checks.ts'
import { build, spec } from '../../support/decider-spec.ts'

// The verification job (stream `job-<uuid>`): queued → (deferred ↔ retried)* → completed |
// failed. Interface section 3: "lifecycle statuses include completed and failed; a terminal
// status triggers webhook delivery". Greylisting (RFC 6647; RFC 5321 §4.2.1: a 4yz reply is
// transient, "the action may be requested again"): the job is deferred and retried until a deadline
// (docs/design/architecture.md, VERIFIER_GREYLIST_RETRY_S / VERIFIER_GREYLIST_DEADLINE_S).

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'
const retryAt = '2026-11-22T10:01:00.000Z'
const deadline = '2026-11-22T10:30:00.000Z'

// Event builders.
const queued = build<JobQueued>('JobQueued', {
  job_uuid: 'j1',
  user_uuid: U,
  email: 'sealed:v1:x',
  checks: ['syntax', 'dns', 'smtp'],
  cost: 7,
  environment: 'live',
  key_uuid: null,
  reservation_uuid: 'r-j1',
  queued_at: now
})
const completed = build<JobCompleted>('JobCompleted', {
  job_uuid: 'j1',
  user_uuid: U,
  environment: 'live',
  verdict: 'valid',
  reason: 'accepted_email',
  score: 100,
  charge: 7,
  result: {},
  completed_at: now
})
const deferred = build<JobDeferred>('JobDeferred', {
  job_uuid: 'j1',
  user_uuid: U,
  attempt: 1,
  reason: 'greylisted',
  retry_at: retryAt,
  deadline_at: deadline,
  deferred_at: now
})
const failed = build<JobFailed>('JobFailed', { job_uuid: 'j1', user_uuid: U, environment: 'live', error: 'x', failed_at: now })

// Command builders: what a worker knows (the owner comes from the job's own stream).
const queue = (over: Partial<JobQueued['data']> = {}): JobCommand => ({ type: 'QueueJob', data: queued(over).data })
const complete = (over: Partial<JobCompleted['data']> = {}): JobCommand => {
  const { user_uuid: _, environment: __, ...data } = completed(over).data
  return { type: 'CompleteJob', data }
}
const defer = (over: Partial<JobDeferred['data']> = {}): JobCommand => {
  const { user_uuid: _, attempt: __, ...data } = deferred(over).data
  return { type: 'DeferJob', data }
}
const fail = (error = 'x'): JobCommand => ({ type: 'FailJob', data: { job_uuid: 'j1', error, failed_at: now } })

t.test('QueueJob and CompleteJob', async t => {
  const j = spec(t, job)
  j([]).when(queue()).then([queued()], 'a new job is queued as submitted')
  j([queued()]).when(queue()).thenNothing('queueing a job that exists is nothing (submission and intake both may)')
  j([queued()]).when(complete()).then([completed()], "a queued job completes; the event names its owner and environment from the job's stream")
  j([queued({ environment: 'test', cost: 0 })])
    .when(complete({ charge: 0 }))
    .then([completed({ environment: 'test', charge: 0 })], "a sandbox job's result says so (issue 42 item 10: its webhooks and usage are the sandbox's)")
  j([queued({ environment: 'test', cost: 0 })])
    .when(fail())
    .then([failed({ environment: 'test' })], 'and so does its failure')
  j([queued(), completed()])
    .when(complete({ verdict: 'invalid', reason: 'x', score: 0 }))
    .thenNothing('a terminal job is not completed twice')
  j([queued(), completed()]).when(fail()).thenNothing('a completed job does not fail afterwards')
  j([]).when(complete()).thenRejects('job.not_found', 404, 'completing a job that was never queued is refused')
  j([queued(), completed()]).thenState(s => s.status, 'completed', 'a completed job is completed')
  j([queued(), failed()]).when(complete()).thenNothing('a failed job is not completed afterwards')
  j([queued(), completed({ charge: 99 })]).thenState(
    s => s.status !== 'none' && s.charge,
    7,
    'a job never charges more than its cost (ARCHITECTURE "Money": capture at most what was reserved)'
  )
  j([queued({ reservation_uuid: undefined })]).thenState(
    s => s.status !== 'none' && s.reservation_uuid,
    null,
    'a job queued before reservations had names funds by none'
  )
})

t.test('DeferJob: greylisted jobs wait and are retried', async t => {
  const j = spec(t, job)
  j([queued()]).when(defer()).then([deferred()], 'a greylisted job is deferred: attempt 1, retried at retry_at, until deadline_at')
  j([queued(), deferred()])
    .when(defer({ retry_at: '2026-11-22T10:03:00.000Z', deferred_at: retryAt }))
    .then([deferred({ attempt: 2, retry_at: '2026-11-22T10:03:00.000Z', deferred_at: retryAt })], 'greylisted again on the retry: attempt 2')
  j([queued(), deferred()])
    .when(complete({ verdict: 'unknown', reason: 'greylisted', score: 0, charge: 0 }))
    .then(
      [completed({ verdict: 'unknown', reason: 'greylisted', score: 0, charge: 0 })],
      'past the deadline a deferred job completes unknown/greylisted at no charge'
    )
  j([queued(), deferred()]).when(complete()).then([completed()], 'or a retry gets its verdict')
  j([queued(), completed()]).when(defer()).thenNothing('a completed job is not deferred')
  j([queued(), failed()]).when(defer()).thenNothing('a failed job is not deferred')
  j([]).when(defer()).thenRejects('job.not_found', 404, 'deferring a job that was never queued is refused')
  j([queued(), deferred(), deferred({ attempt: 2, retry_at: deadline })]).thenState(
    s => s.status !== 'none' && [s.status, s.attempts, s.retry_at],
    ['deferred', 2, deadline],
    'the state holds the latest attempt and when it is retried'
  )
  j([queued(), completed(), deferred()]).thenState(s => s.status, 'completed', 'a late deferral never reopens a terminal job')
})

t.test('FailJob', async t => {
  const j = spec(t, job)
  j([queued()])
    .when(fail('engine crashed'))
    .then([failed({ error: 'engine crashed' })], 'a queued job fails with the error')
  j([queued(), deferred()]).when(fail()).then([failed()], 'a deferred job may fail')
  j([queued(), failed()]).when(fail('again')).thenNothing('a failed job does not fail twice')
  j([]).when(fail()).thenRejects('job.not_found', 404, 'failing a job that was never queued is refused')
})

t.test('checks: dependencies and costs (what a job reserves)', async t => {
  t.same(resolveChecks(['smtp']), ['syntax', 'dns', 'smtp'], 'smtp needs syntax and dns')
  t.same(resolveChecks(['role']), ['syntax', 'role'], 'role needs syntax')
  t.same(resolveChecks(['catch_all']), ['syntax', 'dns', 'smtp', 'catch_all'], 'catch_all needs the SMTP conversation')
  t.same(resolveChecks(undefined), ['syntax', 'typo', 'disposable', 'role', 'free', 'dns', 'smtp', 'catch_all'], 'no checks asked: all of them')
  t.equal(costOf(resolveChecks(['smtp'])), 7, 'smtp needs dns: 6 + 1')
  t.equal(costOf(resolveChecks(undefined)), 10, 'a full verification costs 10 tokens')
  t.equal(costOf(['syntax', 'role']), 0, 'local checks are free')
})
