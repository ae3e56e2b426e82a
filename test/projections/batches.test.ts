import t from 'tap'
import { event, projectionSpec } from '../support/projection-spec.ts'
import { batchesProjection } from '../../src/projections/batches.ts'

// The batches read model, given/when/then: a document per batch with its progress, and
// its items in blocks of a hundred (item i in block floor(i / 100), at i mod 100). The
// oracle is a batch's life written out by hand.

const U = '01a600f4-0000-7000-8000-000000000001'
const B = '01a600f4-0000-7000-8000-000000000201'
const C = '01a600f4-0000-7000-8000-000000000301'
const stream = `batch-${B}`
const at = '2026-11-25T10:05:00.000Z'
const later = '2026-11-25T10:20:00.000Z'
const block = (n: number): string => `${B}|${String(n).padStart(9, '0')}`

const created = event(
  stream,
  'BatchCreated',
  {
    batch_uuid: B,
    user_uuid: U,
    name: 'sealed:n',
    checks: ['syntax', 'smtp'],
    cost_per_item: 10,
    environment: 'live',
    key_uuid: null,
    agent_uuid: null,
    created_at: at
  },
  at
)
/** A part of `n` items from `first`; the first of them invalid. */
const added = (first: number, n: number) =>
  event(
    stream,
    'BatchItemsAdded',
    {
      batch_uuid: B,
      user_uuid: U,
      chunk_uuid: C,
      part: first === 0 ? 0 : 1,
      first,
      items: Array.from({ length: n }, (_, k) => ({ email: `sealed:${first + k}`, hash: `h${first + k}`, ...(k === 0 && { invalid: true }) })),
      reservation_uuid: null,
      amount: n * 10,
      chunk_items: n,
      duplicates: 1,
      added_at: at
    },
    at
  )
const result = (i: number, verdict: 'valid' | 'invalid' | 'risky' | 'unknown', reason: string) => ({
  i,
  verdict,
  reason,
  score: verdict === 'valid' ? 95 : 0,
  flags: [],
  did_you_mean: null,
  charge: verdict === 'unknown' ? 0 : 10,
  mx_host: 'sealed:mx',
  smtp_provider: null,
  checked_at: later
})
const recorded = (...results: Array<ReturnType<typeof result>>) =>
  event(stream, 'BatchResultsRecorded', { batch_uuid: B, user_uuid: U, chunk_uuid: C, results, sandbox: false, recorded_at: later }, later)

t.test('a part of 150 items: the batch counts them, two blocks hold them, the invalid one is done at once', async t => {
  await projectionSpec(
    t,
    batchesProjection
  )(created)
    .when(added(0, 150))
    .then({
      batches: [
        {
          _id: B,
          status: 'receiving',
          total: 150,
          processed: 1,
          duplicates: 1,
          by_verdict: { invalid: 1, valid: 0 },
          by_reason: { invalid_syntax: 1 },
          tokens: { reserved: 1500, captured: 0, released: 0 }
        }
      ],
      batch_item_blocks: [
        {
          _id: block(0),
          block: 0,
          items: [
            { email: 'sealed:0', status: 'done', verdict: 'invalid' },
            { email: 'sealed:1', status: 'pending', verdict: null }
          ]
        },
        { _id: block(1), block: 1, items: [{ email: 'sealed:100', status: 'pending' }] }
      ]
    })
})

t.test('results, a deferral, the settlement and the end: items and counts follow', async t => {
  await projectionSpec(t, batchesProjection)(created, added(0, 3))
    .when(
      event(
        stream,
        'BatchItemsDeferred',
        { batch_uuid: B, user_uuid: U, chunk_uuid: C, items: [{ i: 2, email: 'sealed:2' }], attempt: 1, retry_at: later, deadline_at: later, deferred_at: at },
        at
      ),
      recorded(result(1, 'valid', 'accepted_email'), result(2, 'unknown', 'greylisted')),
      event(
        stream,
        'BatchChunkProcessed',
        { batch_uuid: B, user_uuid: U, chunk_uuid: C, reservation_uuid: null, amount: 30, charge: 20, processed_at: later },
        later
      ),
      event(stream, 'BatchIntakeClosed', { batch_uuid: B, user_uuid: U, reason: 'final', closed_at: later }, later),
      event(stream, 'BatchCompleted', { batch_uuid: B, user_uuid: U, total: 3, completed_at: later }, later)
    )
    .then({
      batches: [
        {
          status: 'completed',
          total: 3,
          processed: 3,
          by_verdict: { valid: 1, invalid: 1, unknown: 1 },
          by_reason: { accepted_email: 1, greylisted: 1, invalid_syntax: 1 },
          tokens: { reserved: 30, captured: 20, released: 10 },
          closed_at: later,
          completed_at: later
        }
      ],
      batch_item_blocks: [
        {
          items: [
            { status: 'done', verdict: 'invalid' },
            { status: 'done', verdict: 'valid', score: 95, mx_host: 'sealed:mx', checked_at: later },
            { status: 'done', verdict: 'unknown', reason: 'greylisted' }
          ]
        }
      ]
    })
})

t.test('the kept file: attached, then removed by its blob id only', async t => {
  const source = `batch_source-${B}`
  const attached = (blob: string) =>
    event(
      source,
      'BatchSourceAttached',
      { batch_uuid: B, user_uuid: U, blob_id: blob, file_name: 'sealed:f', format: 'csv', bytes: 10, column: null, attached_at: at, expires_at: later },
      at
    )
  const removed = (blob: string) =>
    event(source, 'BatchSourceRemoved', { batch_uuid: B, user_uuid: U, blob_id: blob, reason: 'requested', removed_at: later }, later)
  await projectionSpec(
    t,
    batchesProjection
  )(created)
    .when(attached('b1'), removed('b0'))
    .then({ batches: [{ source: { blob_id: 'b1', format: 'csv' }, source_expires_at: later }] }, 'another blob removed: the file stays')
  await projectionSpec(t, batchesProjection)(created, attached('b1'))
    .when(removed('b1'))
    .then({ batches: [{ source: null, source_expires_at: null }] })
})

t.test('an erased account loses its batches and items; later events make none', async t => {
  await projectionSpec(t, batchesProjection)(created, added(0, 3))
    .when(event(`user-${U}`, 'UserDeleted', { user_uuid: U, deleted_at: later }, later), recorded(result(1, 'valid', 'accepted_email')))
    .then({ batches: [], batch_item_blocks: [] })
})
