import { randomBytes } from 'node:crypto'
import t from 'tap'
import { spec } from '../../support/decider-spec.ts'
import * as batch from '../../../src/domain/batch/decider.ts'
import type { BatchCommand } from '../../../src/domain/batch/decider.ts'
import {
  BATCH_PART_ITEMS,
  type BatchChunkAbandoned,
  type BatchChunkProcessed,
  type BatchCompleted,
  type BatchCreated,
  type BatchEvent,
  type BatchHeld,
  type BatchIntakeClosed,
  type BatchItem,
  type BatchItemResult,
  type BatchItemsAdded,
  type BatchItemsDeferred,
  type BatchResultsRecorded
} from '../../../src/domain/batch/events.ts'

// The batch decider (one stream per batch). Interface section 4
// "Batches": 403 when the "cumulative unique-valid count would exceed max_batch_size", 409
// "intake closed or batch terminal"; section 3: "batch intake closed or terminal → POST
// /api/batches/{uuid}/emails → 409"; section 8: max_batch_size "counted on unique valid
// emails, cumulative across chunks".
const B = 'batch-1'
const U = 'user-1'
const NOW = '2026-11-24T10:00:00.000Z'
const LATER = '2026-11-24T11:00:00.000Z'

// Event builders (a chunk's reservation is `r-<chunk>` when it charges anything).
const created = (cost = 7, over: Partial<BatchCreated['data']> = {}): BatchCreated => ({
  type: 'BatchCreated',
  data: {
    batch_uuid: B,
    user_uuid: U,
    name: null,
    checks: ['syntax', 'dns', 'smtp'],
    cost_per_item: cost,
    environment: 'live',
    key_uuid: null,
    agent_uuid: null,
    created_at: NOW,
    ...over
  }
})
const item = (n: number, invalid = false): BatchItem => ({ email: `sealed:${n}`, hash: `h${n}`, ...(invalid && { invalid: true as const }) })
const added = (
  chunk: string,
  first: number,
  items: BatchItem[],
  amount: number,
  duplicates = 0,
  at = NOW,
  environment: 'live' | 'test' = 'live'
): BatchItemsAdded => ({
  type: 'BatchItemsAdded',
  data: {
    batch_uuid: B,
    user_uuid: U,
    chunk_uuid: chunk,
    part: 0,
    first,
    items,
    reservation_uuid: amount > 0 ? `r-${chunk}` : null,
    amount,
    chunk_items: items.length,
    duplicates,
    environment,
    added_at: at
  }
})
const closed = (reason: 'final' | 'idle' = 'final', at = NOW): BatchIntakeClosed => ({
  type: 'BatchIntakeClosed',
  data: { batch_uuid: B, user_uuid: U, reason, closed_at: at }
})
const result = (i: number, verdict: 'valid' | 'invalid' | 'unknown' = 'valid', charge = 7): BatchItemResult => ({
  i,
  verdict,
  reason: verdict === 'valid' ? 'accepted_email' : verdict === 'unknown' ? 'greylisted' : 'mailbox_not_found',
  score: verdict === 'valid' ? 95 : 0,
  flags: [],
  did_you_mean: null,
  charge
})
const recorded = (chunk: string, results: BatchItemResult[], sandbox = false): BatchResultsRecorded => ({
  type: 'BatchResultsRecorded',
  data: { batch_uuid: B, user_uuid: U, chunk_uuid: chunk, results, sandbox, recorded_at: NOW }
})
const deferred = (chunk: string, items: Array<{ i: number; email: string }>, attempt = 1): BatchItemsDeferred => ({
  type: 'BatchItemsDeferred',
  data: { batch_uuid: B, user_uuid: U, chunk_uuid: chunk, items, attempt, retry_at: LATER, deadline_at: LATER, deferred_at: NOW }
})
const processed = (chunk: string, amount: number, charge: number): BatchChunkProcessed => ({
  type: 'BatchChunkProcessed',
  data: { batch_uuid: B, user_uuid: U, chunk_uuid: chunk, reservation_uuid: amount > 0 ? `r-${chunk}` : null, amount, charge, processed_at: NOW }
})
const completed = (total: number, at = NOW): BatchCompleted => ({
  type: 'BatchCompleted',
  data: { batch_uuid: B, user_uuid: U, environment: 'live', total, completed_at: at }
})
const abandoned = (chunk: string): BatchChunkAbandoned => ({
  type: 'BatchChunkAbandoned',
  data: { batch_uuid: B, user_uuid: U, chunk_uuid: chunk, abandoned_at: NOW }
})

// Command builders.
const chunk = (uuid: string, items: BatchItem[], amount: number, final = false, max = 100, environment: 'live' | 'test' = 'live') => ({
  type: 'AddChunk' as const,
  data: { chunk_uuid: uuid, environment, items, duplicates: 0, reservation_uuid: amount > 0 ? `r-${uuid}` : null, amount, max_batch_size: max, final, now: NOW }
})
const createBatch = (over: Partial<Extract<BatchCommand, { type: 'CreateBatch' }>['data']> = {}): BatchCommand => ({
  type: 'CreateBatch',
  data: {
    batch_uuid: B,
    user_uuid: U,
    name: null,
    checks: ['syntax', 'dns', 'smtp'],
    cost_per_item: 7,
    environment: 'live',
    key_uuid: null,
    agent_uuid: null,
    now: NOW,
    ...over
  }
})
const record = (chunkUuid: string, results: BatchItemResult[]): BatchCommand => ({
  type: 'RecordBatchResults',
  data: { chunk_uuid: chunkUuid, results, now: NOW }
})

t.test('CreateBatch', async t => {
  const b = spec(t, batch)
  b([]).when(createBatch()).then([created()], 'a new batch')
  b([created()])
    .when(createBatch({ checks: [] }))
    .thenNothing('an existing batch: nothing')
  b([])
    .when(createBatch({ first_chunk: chunk('c1', [item(1)], 7, true).data }))
    .then([created(), added('c1', 0, [item(1)], 7), closed()], 'with its first chunk, in one decision')
  b([created()])
    .when(createBatch({ first_chunk: chunk('c1', [item(1)], 7).data }))
    .thenNothing('an existing batch with a first chunk: nothing (the chunk is not appended twice)')
})

t.test('AddChunk', async t => {
  const b = spec(t, batch)
  b([created()])
    .when(chunk('c1', [item(1), item(2, true)], 7))
    .then([added('c1', 0, [item(1), item(2, true)], 7)], 'a valid and an invalid item: only the valid one is paid for')
  b([created(), added('c1', 0, [item(1), item(2)], 14)])
    .when(chunk('c2', [item(3)], 7))
    .then([added('c2', 2, [item(3)], 7)], 'indexes go on after the earlier chunks')
  b([created(), added('c1', 0, [item(1)], 7)])
    .when(chunk('c2', [item(1)], 7))
    .thenRejects('add_chunk.changed', 409, 'an item the batch holds already: decided again by the handler')
  b([created()])
    .when(chunk('c1', [item(1), item(2)], 7))
    .thenRejects('add_chunk.changed', 409, 'an amount that does not match the valid items')
  b([created(), added('c1', 0, [item(1), item(2)], 14)])
    .when(chunk('c2', [item(3), item(4, true)], 7, false, 3))
    .then([added('c2', 2, [item(3), item(4, true)], 7)], 'max_batch_size counts unique valid items only (3 of 3)')
  b([created(), added('c1', 0, [item(1), item(2)], 14)])
    .when(chunk('c2', [item(3), item(4)], 14, false, 3))
    .thenRejects('add_chunk.max_batch_size', 403, 'cumulative across chunks: 2 + 2 valid past a max_batch_size of 3 (403)')
  b([created(), closed()])
    .when(chunk('c2', [item(3)], 7))
    .thenRejects('add_chunk.intake_closed', 409, 'intake closed: 409')
  b([created(), added('c1', 0, [item(1)], 7), closed(), recorded('c1', [result(0)]), processed('c1', 7, 7), completed(1)])
    .when(chunk('c2', [item(3)], 7))
    .thenRejects('add_chunk.intake_closed', 409, 'a terminal batch: 409')
  b([])
    .when(chunk('c1', [item(1)], 7))
    .thenRejects('batch.not_found', 404, 'no such batch')
  b([created(), abandoned('c1')])
    .when(chunk('c1', [item(1)], 7))
    .thenRejects('add_chunk.changed', 409, 'an abandoned chunk never comes in late')
  b([created(), added('c1', 0, [item(1)], 7)])
    .when(chunk('c1', [item(2)], 7))
    .thenRejects('add_chunk.changed', 409, 'a chunk accepted already is not accepted twice')
  b([created()])
    .when(chunk('c1', [item(1)], 7, false, 100, 'test'))
    .thenRejects('add_chunk.environment_mismatch', 403, "a test credential's chunk on a live batch: 403 (it would be billed and probed live)")
  b([created(0, { environment: 'test' })])
    .when(chunk('c1', [item(1)], 0))
    .thenRejects('add_chunk.environment_mismatch', 403, "a live credential's chunk on a sandbox batch: 403")
  b([created(0, { environment: 'test' })])
    .when(chunk('c1', [item(1)], 0, false, 100, 'test'))
    .then([added('c1', 0, [item(1)], 0, 0, NOW, 'test')], "a test chunk on a test batch (its items say they are the sandbox's)")
  b([created()])
    .when(chunk('c1', [item(1, true)], 0))
    .then([added('c1', 0, [item(1, true)], 0), processed('c1', 0, 0)], 'nothing to verify: processed at once')
  b([created()])
    .when(chunk('c1', [item(1, true)], 0, true))
    .then([added('c1', 0, [item(1, true)], 0), processed('c1', 0, 0), closed(), completed(1)], 'and with final, completed at once')
  b([created()])
    .when(chunk('c1', [], 0, true))
    .then([added('c1', 0, [], 0), processed('c1', 0, 0), closed(), completed(0)], 'an empty final chunk closes intake')
  b([created()])
    .when(chunk('c1', [item(1), item(2)], 14, true))
    .then([added('c1', 0, [item(1), item(2)], 14), closed()], 'a final chunk with items to verify closes intake, not the batch')
  b([created(), added('c1', 0, [item(1)], 7)])
    .when(chunk('c2', [item(2, true)], 0, true))
    .then(
      [added('c2', 1, [item(2, true)], 0), processed('c2', 0, 0), closed()],
      'a final chunk with nothing to verify while an earlier item is pending: not completed yet'
    )
  const many = Array.from({ length: BATCH_PART_ITEMS + 1 }, (_, n) => item(n))
  const events = batch.decide(chunk('c1', many, 7 * many.length, false, 10_000), [created()].reduce(batch.evolve, batch.initialState()))
  t.same(
    events.map(e => e.type),
    ['BatchItemsAdded', 'BatchItemsAdded'],
    `${many.length} items in two parts`
  )
  t.same(
    events.map(e => (e.type === 'BatchItemsAdded' ? [e.data.part, e.data.first, e.data.items.length, e.data.amount, e.data.chunk_items] : null)),
    [
      [0, 0, BATCH_PART_ITEMS, 7 * many.length, many.length],
      [1, BATCH_PART_ITEMS, 1, 0, 0]
    ],
    'the first part carries the reservation and the chunk size'
  )
})

t.test('RecordBatchResults, DeferBatchItems and completion', async t => {
  const b = spec(t, batch)
  const open: BatchEvent[] = [created(), added('c1', 0, [item(1), item(2), item(3, true)], 14)]
  b(open)
    .when(record('c1', [result(0)]))
    .then([recorded('c1', [result(0)])], 'one of two pending items')
  b([...open, recorded('c1', [result(0)])])
    .when(record('c1', [result(0), result(1, 'unknown', 0)]))
    .then([recorded('c1', [result(1, 'unknown', 0)]), processed('c1', 14, 7)], 'a result recorded twice counts once; the last pending one settles the chunk')
  b([...open, recorded('c1', [result(0)])])
    .when(record('c1', [result(0)]))
    .thenNothing('a redelivered result: nothing')
  b([...open, closed()])
    .when(record('c1', [result(0), result(1)]))
    .then([recorded('c1', [result(0), result(1)]), processed('c1', 14, 14), completed(3)], 'intake closed and nothing pending: completed')
  b([...open])
    .when(record('c1', [result(2), result(7)]))
    .thenNothing('an invalid item (done at intake) and an index outside the chunk: nothing')
  b([...open])
    .when(record('nope', [result(0)]))
    .thenNothing('an unknown chunk: nothing')
  b(open)
    .when(record('c1', [result(0), result(0, 'invalid', 0)]))
    .then([recorded('c1', [result(0)])], 'the same index twice in one command: the first result only')
  b([created(), added('c1', 0, [item(1)], 7)])
    .when(record('c1', [result(0, 'valid', 99)]))
    .then(
      [recorded('c1', [result(0, 'valid', 99)]), processed('c1', 7, 7)],
      'a chunk never captures more than its reservation holds (7 of 99 asked; ARCHITECTURE "Money")'
    )
  b([created(0, { environment: 'test' }), added('c1', 0, [item(1)], 0)])
    .when(record('c1', [result(0, 'valid', 0)]))
    .then([recorded('c1', [result(0, 'valid', 0)], true), processed('c1', 0, 0)], "a test key's batch records sandbox results and charges nothing")
  const defer = {
    type: 'DeferBatchItems' as const,
    data: {
      chunk_uuid: 'c1',
      items: [
        { i: 0, email: 'sealed:1' },
        { i: 2, email: 'sealed:3' }
      ],
      attempt: 1,
      retry_at: LATER,
      deadline_at: LATER,
      now: NOW
    }
  }
  b(open)
    .when(defer)
    .then([deferred('c1', [{ i: 0, email: 'sealed:1' }])], 'only items still pending are deferred')
  b([...open, recorded('c1', [result(0), result(1)]), processed('c1', 14, 14)])
    .when(defer)
    .thenNothing('a settled chunk defers nothing')
  b(open)
    .when({ ...defer, data: { ...defer.data, chunk_uuid: 'nope' } })
    .thenNothing('an unknown chunk defers nothing')
  b([...open, deferred('c1', [{ i: 0, email: 'sealed:1' }])])
    .when({ ...defer, data: { ...defer.data, attempt: 2 } })
    .then([deferred('c1', [{ i: 0, email: 'sealed:1' }], 2)], 'a deferred item may be deferred again (the next attempt)')
})

t.test('HoldBatch: once per hold while egress is blocked; the next results end it', async t => {
  const b = spec(t, batch)
  const open: BatchEvent[] = [created(), added('c1', 0, [item(1), item(2)], 14)]
  const hold = { type: 'HoldBatch' as const, data: { reason: 'egress_blocked' as const, until: LATER, now: NOW } }
  const heldEvent: BatchHeld = { type: 'BatchHeld', data: { batch_uuid: B, user_uuid: U, reason: 'egress_blocked', held_at: NOW, until: LATER } }
  b(open).when(hold).then([heldEvent], 'a batch with items pending: held, with its deadline')
  b([...open, heldEvent])
    .when(hold)
    .thenNothing('already held: nothing new (a part retried while egress stays blocked)')
  b([...open, heldEvent, recorded('c1', [result(0)])])
    .when(hold)
    .then([heldEvent], 'results recorded since ended that hold: a new one is recorded')
  b([...open, heldEvent]).thenState(s => (s.status === 'none' ? null : s.held_until), LATER, 'the state keeps until when')
  b([created(), added('c1', 0, [item(1, true)], 0), closed(), completed(1)])
    .when(hold)
    .thenNothing('a completed batch is never held')
})

t.test('CloseIdleIntake and AbandonChunk', async t => {
  const b = spec(t, batch)
  b([created(), added('c1', 0, [item(1)], 7)])
    .when({ type: 'CloseIdleIntake', data: { reason: 'final', now: NOW } })
    .then([closed()], 'items pending: processing')
  b([created(), added('c1', 0, [item(1)], 7), closed()]).thenState(s => s.status, 'processing', 'intake closed with items pending: processing')
  b([created(), added('c1', 0, [item(1, true)], 0), processed('c1', 0, 0)])
    .when({ type: 'CloseIdleIntake', data: { reason: 'idle', idle_before: LATER, now: LATER } })
    .then([closed('idle', LATER), completed(1, LATER)], 'idle with nothing pending: completed')
  b([created(), added('c1', 0, [item(1)], 7, 0, LATER)])
    .when({ type: 'CloseIdleIntake', data: { reason: 'idle', idle_before: NOW, now: LATER } })
    .thenNothing('a chunk came after the idle mark: intake stays open')
  b([created(), added('c1', 0, [item(1)], 7)])
    .when({ type: 'CloseIdleIntake', data: { reason: 'idle', now: LATER } })
    .then([closed('idle', LATER)], 'idle without a mark closes')
  b([created(), closed()])
    .when({ type: 'CloseIdleIntake', data: { reason: 'final', now: NOW } })
    .thenNothing('closed already')
  b([created(), closed(), completed(0)])
    .when({ type: 'CloseIdleIntake', data: { reason: 'final', now: NOW } })
    .thenNothing('a completed batch: nothing')
  b([created()])
    .when({ type: 'AbandonChunk', data: { chunk_uuid: 'c9', now: NOW } })
    .then([abandoned('c9')], 'a chunk that never came')
  b([created(), added('c1', 0, [item(1)], 7)])
    .when({ type: 'AbandonChunk', data: { chunk_uuid: 'c1', now: NOW } })
    .thenNothing('an accepted chunk is never abandoned')
  b([created(), abandoned('c9')])
    .when({ type: 'AbandonChunk', data: { chunk_uuid: 'c9', now: NOW } })
    .thenNothing('a chunk is abandoned once')
})

t.test('every command but CreateBatch needs the batch', async t => {
  const b = spec(t, batch)
  b([])
    .when({ type: 'CloseIdleIntake', data: { reason: 'final', now: NOW } })
    .thenRejects('batch.not_found', 404, 'CloseIdleIntake of no batch')
  b([])
    .when(record('c1', [result(0)]))
    .thenRejects('batch.not_found', 404, 'RecordBatchResults of no batch')
  b([])
    .when({ type: 'DeferBatchItems', data: { chunk_uuid: 'c1', items: [], attempt: 1, retry_at: LATER, deadline_at: LATER, now: NOW } })
    .thenRejects('batch.not_found', 404, 'DeferBatchItems of no batch')
  b([])
    .when({ type: 'AbandonChunk', data: { chunk_uuid: 'c1', now: NOW } })
    .thenRejects('batch.not_found', 404, 'AbandonChunk of no batch')
})

t.test('states are never changed in place (a refused append leaves the folded state as it was)', async t => {
  const s0 = [created(), added('c1', 0, [item(1)], 7)].reduce(batch.evolve, batch.initialState()) as batch.Live
  const before = JSON.stringify({ ...s0, hashes: s0.hashes?.map(h => [...h]), open: [...s0.open].map(([k, c]) => [k, { ...c, done: [...c.done] }]) })
  for (let n = 2; n < 40; n++) batch.evolve(s0, added(`c${n}`, n - 1, [item(n)], 7))
  batch.evolve(s0, recorded('c1', [result(0)]))
  t.equal(
    JSON.stringify({ ...s0, hashes: s0.hashes?.map(h => [...h]), open: [...s0.open].map(([k, c]) => [k, { ...c, done: [...c.done] }]) }),
    before,
    'folding further events leaves the earlier state unchanged'
  )
  t.notOk(batch.holds(s0, 'h2'), 'an item added to a later state is not in the earlier one')
  const s39 = Array.from({ length: 38 }, (_, k) => added(`c${k + 2}`, k + 1, [item(k + 2)], 7)).reduce(batch.evolve, s0 as batch.BatchState) as batch.Live
  t.ok(
    [1, 2, 20, 39].every(n => batch.holds(s39, `h${n}`)),
    'merged runs still hold every item'
  )
  t.ok((s39.hashes?.length ?? 0) <= 7, `${s39.hashes?.length} runs`)
})

t.test('the de-duplication index holds exactly the items added, in few runs, at 8 bytes an item', async t => {
  // The oracle: a plain Set of the blind indexes added (16 hex digits, as the handler makes them).
  const added16 = new Set<string>()
  let s: batch.BatchState = batch.evolve(batch.initialState(), created())
  let first = 0
  const parts = 300
  for (let p = 0; p < parts; p++) {
    // Parts of uneven sizes, as a chunk's last part is.
    const items = Array.from({ length: 1 + ((p * 37) % 90) }, () => ({ email: 'sealed:x', hash: randomBytes(8).toString('hex') }))
    for (const it of items) added16.add(it.hash)
    s = batch.evolve(s, added(`c${p}`, first, items, 7))
    first += items.length
  }
  const live = s as batch.Live
  const missing = [...added16].filter(h => !batch.holds(live, h))
  t.same(missing, [], `every one of ${added16.size} added indexes is held`)
  const others = Array.from({ length: 2_000 }, () => randomBytes(8).toString('hex')).filter(h => !added16.has(h))
  t.same(
    others.filter(h => batch.holds(live, h)),
    [],
    'no index that was not added is held'
  )
  t.ok(live.hashes!.length <= Math.ceil(Math.log2(parts)) + 1, `${live.hashes!.length} runs for ${parts} parts`)
  t.equal(
    live.hashes!.reduce((n, run) => n + run.byteLength, 0),
    8 * added16.size,
    '8 bytes an item'
  )
})
