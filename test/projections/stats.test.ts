import t from 'tap'
import { event, projectionSpec } from '../support/projection-spec.ts'
import { statsProjection } from '../../src/projections/stats.ts'

// The statistics read model, given/when/then: usage per 15-minute slot, UTC hour and UTC
// day, and the all-time summary of live results (sandbox results are not in it).

const U = '01a400f4-0000-7000-8000-000000000001'
const J = '01a400f4-0000-7000-8000-000000000101'
const K = '01a400f4-0000-7000-8000-000000000102'
const at = '2026-11-25T10:05:00.000Z'
const done = '2026-11-25T10:20:00.000Z'
const queued = (job: string, environment: 'live' | 'test' = 'live') =>
  event(
    `job-${job}`,
    'JobQueued',
    { job_uuid: job, user_uuid: U, email: 'sealed:x', checks: ['syntax', 'mx'], cost: 2, environment, key_uuid: null, queued_at: at },
    at
  )
const completed = (job: string, sandbox: boolean) =>
  event(
    `job-${job}`,
    'JobCompleted',
    {
      job_uuid: job,
      user_uuid: U,
      verdict: 'valid',
      reason: 'accepted_email',
      score: 95,
      charge: 2,
      result: {
        sandbox,
        checks: [
          { name: 'syntax', outcome: 'passed' },
          { name: 'mx', outcome: 'passed' },
          { name: 'smtp', outcome: 'skipped' }
        ]
      },
      completed_at: done
    },
    done
  )

t.test('a job queued and completed: its slots, hour and day count it; the summary counts the live result', async t => {
  await projectionSpec(
    t,
    statsProjection
  )(queued(J))
    .when(completed(J, false), event(`wallet-${U}`, 'TokensCaptured', { user_uuid: U, job_uuid: J, amount: 2, captured_at: done }, done))
    .then({
      usage_slots: [
        { slot: '2026-11-25T10:00:00.000Z', submitted: 1, completed: {}, tokens_spent: 0 },
        {
          slot: '2026-11-25T10:15:00.000Z',
          submitted: 0,
          completed: { valid: 1 },
          reasons: { accepted_email: 1 },
          checks: { syntax: 1, mx: 1 },
          tokens_spent: 2
        }
      ],
      usage_hours: [{ slot: '2026-11-25T10:00:00.000Z', submitted: 1, completed: { valid: 1 }, tokens_spent: 2 }],
      usage_days: [{ slot: '2026-11-25T00:00:00.000Z', submitted: 1, completed: { valid: 1 }, checks: { syntax: 1, mx: 1 } }],
      stats_summary: [
        { _id: 'all', verifications: 1, by_verdict: { valid: 1 }, by_reason: { accepted_email: 1 }, checks_run: 2, since: done, updated_at: done }
      ]
    })
})

t.test("a sandbox result counts in the account's sandbox usage, not in the summary", async t => {
  await projectionSpec(
    t,
    statsProjection
  )(queued(K, 'test'))
    .when(completed(K, true))
    .then({ usage_days: [{ environment: 'test', submitted: 1, completed: { valid: 1 } }], stats_summary: [] })
})

t.test('live and sandbox usage are kept apart (issue 42 item 10); an event without its environment reads it from what it says', async t => {
  await projectionSpec(t, statsProjection)(queued(J), queued(K, 'test'))
    .when(
      completed(J, false),
      completed(K, true),
      event(`job-${J}`, 'JobFailed', { job_uuid: J, user_uuid: U, error: 'x', failed_at: done }, done),
      event(`job-${K}`, 'JobFailed', { job_uuid: K, user_uuid: U, environment: 'test', error: 'x', failed_at: done }, done)
    )
    .then({
      usage_days: [
        { _id: `${U}|2026-11-25T00:00:00.000Z`, environment: 'live', submitted: 1, completed: { valid: 1 }, failed: 1 },
        { _id: `${U}|test|2026-11-25T00:00:00.000Z`, environment: 'test', submitted: 1, completed: { valid: 1 }, failed: 1 }
      ]
    })
})

t.test('batch items: submitted and, with bad syntax, completed invalid at once; results recorded add verdicts', async t => {
  const B = '01a400f4-0000-7000-8000-000000000201'
  await projectionSpec(t, statsProjection)()
    .when(
      event(
        `batch-${B}`,
        'BatchItemsAdded',
        {
          batch_uuid: B,
          user_uuid: U,
          chunk_uuid: 'c',
          part: 0,
          first: 0,
          items: [{ email: 'a' }, { email: 'b', invalid: true }, { email: 'c' }],
          reservation_uuid: null,
          amount: 0,
          chunk_items: 3,
          duplicates: 0,
          added_at: at
        },
        at
      ),
      event(
        `batch-${B}`,
        'BatchResultsRecorded',
        {
          batch_uuid: B,
          user_uuid: U,
          chunk_uuid: 'c',
          results: [
            { i: 0, verdict: 'valid', reason: 'accepted_email' },
            { i: 2, verdict: 'risky', reason: 'catch_all' }
          ],
          sandbox: false,
          recorded_at: at
        },
        at
      )
    )
    .then({
      usage_slots: [
        { submitted: 3, completed: { invalid: 1, valid: 1, risky: 1 }, reasons: { invalid_syntax: 1, accepted_email: 1, catch_all: 1 }, checks: { syntax: 1 } }
      ],
      stats_summary: [{ verifications: 2, by_verdict: { valid: 1, risky: 1 } }]
    })
})

t.test("an erased account's usage goes; its later events count nowhere but the summary keeps its past", async t => {
  await projectionSpec(t, statsProjection)(queued(J), completed(J, false))
    .when(event(`user-${U}`, 'UserDeleted', { user_uuid: U, deleted_at: done }, done), queued(K))
    .then({ usage_slots: [{ _id: `${U}|erased` }], usage_hours: [], usage_days: [], stats_summary: [{ verifications: 1 }] })
})
