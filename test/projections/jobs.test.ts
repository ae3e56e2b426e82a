import t from 'tap'
import { event, projectionSpec } from '../support/projection-spec.ts'
import { jobsProjection } from '../../src/projections/jobs.ts'

// The jobs read model, given/when/then: a document per job and its counts by the day it
// was created, its status and its verdict (per day and all time), which move with the job.
// The oracle is the job's life written out by hand.

const U = '01a500f4-0000-7000-8000-000000000001'
const J = '01a500f4-0000-7000-8000-000000000101'
const K = '01a500f4-0000-7000-8000-000000000102'
const at = '2026-11-25T10:05:00.000Z'
const later = '2026-11-25T10:20:00.000Z'
const queued = (job: string, day = at) =>
  event(
    `job-${job}`,
    'JobQueued',
    { job_uuid: job, user_uuid: U, email: 'sealed:x', checks: ['syntax', 'smtp'], cost: 10, environment: 'live', key_uuid: null, queued_at: day },
    day
  )
const deferred = (job: string) =>
  event(
    `job-${job}`,
    'JobDeferred',
    { job_uuid: job, user_uuid: U, attempt: 1, reason: 'greylisted', retry_at: later, deadline_at: later, deferred_at: at },
    at
  )
const completed = (job: string, verdict: string) =>
  event(
    `job-${job}`,
    'JobCompleted',
    { job_uuid: job, user_uuid: U, verdict, reason: 'accepted_email', score: 95, charge: 10, result: { sandbox: false }, completed_at: later },
    later
  )
const failed = (job: string) => event(`job-${job}`, 'JobFailed', { job_uuid: job, user_uuid: U, error: 'engine crashed', failed_at: later }, later)

t.test('a queued job: its document, and one count for its day and one for all time', async t => {
  await projectionSpec(t, jobsProjection)()
    .when(queued(J))
    .then({
      jobs: [{ _id: J, status: 'queued', verdict: null, created_at: at, attempts: 0, revision: 0 }],
      job_counts: [{ _id: `${U}|live|2026-11-25|queued|none`, day: '2026-11-25', status: 'queued', verdict: 'none', n: 1 }],
      job_totals: [{ _id: `${U}|live|queued|none`, status: 'queued', verdict: 'none', n: 1 }]
    })
})

t.test('deferred, then completed: the job moves between counts, leaving none behind', async t => {
  await projectionSpec(
    t,
    jobsProjection
  )(queued(J))
    .when(deferred(J), completed(J, 'valid'))
    .then({
      jobs: [{ _id: J, status: 'completed', verdict: 'valid', score: 95, attempts: 1, retry_at: null, completed_at: later, revision: 2 }],
      job_counts: [{ _id: `${U}|live|2026-11-25|completed|valid`, n: 1 }],
      job_totals: [{ _id: `${U}|live|completed|valid`, n: 1 }]
    })
})

t.test('jobs of two days: per-day counts apart, all-time totals together', async t => {
  await projectionSpec(t, jobsProjection)(queued(J), queued(K, '2026-11-26T08:00:00.000Z'))
    .when(completed(J, 'invalid'), failed(K))
    .then({
      jobs: [
        { _id: J, status: 'completed', verdict: 'invalid' },
        { _id: K, status: 'failed', error: 'engine crashed' }
      ],
      job_counts: [
        { _id: `${U}|live|2026-11-25|completed|invalid`, n: 1 },
        { _id: `${U}|live|2026-11-26|failed|none`, n: 1 }
      ],
      job_totals: [
        { _id: `${U}|live|completed|invalid`, n: 1 },
        { _id: `${U}|live|failed|none`, n: 1 }
      ]
    })
})

t.test('two jobs in one count: n is 2, and one leaving it makes it 1', async t => {
  await projectionSpec(t, jobsProjection)(queued(J), queued(K))
    .when(completed(K, 'valid'))
    .then({
      job_counts: [
        { _id: `${U}|live|2026-11-25|completed|valid`, n: 1 },
        { _id: `${U}|live|2026-11-25|queued|none`, n: 1 }
      ],
      job_totals: [
        { _id: `${U}|live|completed|valid`, n: 1 },
        { _id: `${U}|live|queued|none`, n: 1 }
      ]
    })
})

t.test('an event before its job makes nothing; an erased account loses its jobs and counts, and later events make none', async t => {
  await projectionSpec(t, jobsProjection)(completed(K, 'valid'), queued(J))
    .when(event(`user-${U}`, 'UserDeleted', { user_uuid: U, deleted_at: later }, later), completed(J, 'valid'))
    .then({ jobs: [], job_counts: [], job_totals: [] })
  await projectionSpec(t, jobsProjection)().when(completed(K, 'valid')).then({ jobs: [], job_counts: [], job_totals: [] }, 'a completion with no job')
})
