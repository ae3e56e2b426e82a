import t from 'tap'
import { spec } from './support/decider-spec.ts'
import * as batch from '../src/domain/batch/decider.ts'
import { BATCH_PART_ITEMS, type BatchEvent, type BatchItem } from '../src/domain/batch/events.ts'

// The batch decider (issue "Bulk verification"), given → when → then, with event builders.
const B = 'batch-1'
const U = 'user-1'
const NOW = '2026-11-24T10:00:00.000Z'
const LATER = '2026-11-24T11:00:00.000Z'

const created = (cost = 7): BatchEvent => ({ type: 'BatchCreated', data: { batch_uuid: B, user_uuid: U, name: null, checks: ['syntax', 'dns', 'smtp'], cost_per_item: cost, environment: 'live', key_uuid: null, agent_uuid: null, created_at: NOW } })
const item = (n: number, invalid = false): BatchItem => ({ email: `sealed:${n}`, hash: `h${n}`, ...(invalid && { invalid: true as const }) })
const added = (chunk: string, first: number, items: BatchItem[], amount: number, duplicates = 0, at = NOW): BatchEvent => ({ type: 'BatchItemsAdded', data: { batch_uuid: B, user_uuid: U, chunk_uuid: chunk, part: 0, first, items, reservation_uuid: amount > 0 ? `r-${chunk}` : null, amount, chunk_items: items.length, duplicates, added_at: at } })
const closed = (reason: 'final' | 'idle' = 'final', at = NOW): BatchEvent => ({ type: 'BatchIntakeClosed', data: { batch_uuid: B, user_uuid: U, reason, closed_at: at } })
const result = (i: number, verdict: 'valid' | 'invalid' | 'unknown' = 'valid', charge = 7) => ({ i, verdict, reason: verdict === 'valid' ? 'accepted_email' : verdict === 'unknown' ? 'greylisted' : 'mailbox_not_found', score: verdict === 'valid' ? 95 : 0, flags: [], did_you_mean: null, charge })
const recorded = (chunk: string, results: ReturnType<typeof result>[]): BatchEvent => ({ type: 'BatchResultsRecorded', data: { batch_uuid: B, user_uuid: U, chunk_uuid: chunk, results, sandbox: false, recorded_at: NOW } })
const processed = (chunk: string, amount: number, charge: number): BatchEvent => ({ type: 'BatchChunkProcessed', data: { batch_uuid: B, user_uuid: U, chunk_uuid: chunk, reservation_uuid: amount > 0 ? `r-${chunk}` : null, amount, charge, processed_at: NOW } })
const completed = (total: number, at = NOW): BatchEvent => ({ type: 'BatchCompleted', data: { batch_uuid: B, user_uuid: U, total, completed_at: at } })
const chunk = (uuid: string, items: BatchItem[], amount: number, final = false, max = 100) => ({ type: 'AddChunk' as const, data: { chunk_uuid: uuid, items, duplicates: 0, reservation_uuid: amount > 0 ? `r-${uuid}` : null, amount, max_batch_size: max, final, now: NOW } })

t.test('CreateBatch', async t => {
  const b = spec(t, batch)
  b([]).when({ type: 'CreateBatch', data: { batch_uuid: B, user_uuid: U, name: null, checks: ['syntax', 'dns', 'smtp'], cost_per_item: 7, environment: 'live', key_uuid: null, agent_uuid: null, now: NOW } }).then([created()], 'a new batch')
  b([created()]).when({ type: 'CreateBatch', data: { batch_uuid: B, user_uuid: U, name: null, checks: [], cost_per_item: 7, environment: 'live', key_uuid: null, agent_uuid: null, now: NOW } }).then([], 'an existing batch: nothing')
  b([]).when({ type: 'CreateBatch', data: { batch_uuid: B, user_uuid: U, name: null, checks: ['syntax', 'dns', 'smtp'], cost_per_item: 7, environment: 'live', key_uuid: null, agent_uuid: null, now: NOW, first_chunk: chunk('c1', [item(1)], 7, true).data } })
    .then([created(), added('c1', 0, [item(1)], 7), closed()], 'with its first chunk, in one decision')
})

t.test('AddChunk', async t => {
  const b = spec(t, batch)
  b([created()]).when(chunk('c1', [item(1), item(2, true)], 7)).then([added('c1', 0, [item(1), item(2, true)], 7)], 'a valid and an invalid item: only the valid one is paid for')
  b([created(), added('c1', 0, [item(1), item(2)], 14)]).when(chunk('c2', [item(3)], 7)).then([added('c2', 2, [item(3)], 7)], 'indexes go on after the earlier chunks')
  b([created(), added('c1', 0, [item(1)], 7)]).when(chunk('c2', [item(1)], 7)).thenThrows('add_chunk.changed', 'an item the batch holds already: decided again by the handler')
  b([created()]).when(chunk('c1', [item(1), item(2)], 7)).thenThrows('add_chunk.changed', 'an amount that does not match the valid items')
  b([created(), added('c1', 0, [item(1), item(2)], 14)]).when(chunk('c2', [item(3), item(4, true)], 7, false, 3)).then([added('c2', 2, [item(3), item(4, true)], 7)], 'max_batch_size counts unique valid items only (3 of 3)')
  b([created(), added('c1', 0, [item(1), item(2)], 14)]).when(chunk('c2', [item(3), item(4)], 14, false, 3)).thenThrows('add_chunk.max_batch_size', 'cumulative across chunks')
  b([created(), closed()]).when(chunk('c2', [item(3)], 7)).thenThrows('add_chunk.intake_closed')
  b([created(), added('c1', 0, [item(1)], 7), closed(), recorded('c1', [result(0)]), processed('c1', 7, 7), completed(1)]).when(chunk('c2', [item(3)], 7)).thenThrows('add_chunk.intake_closed', 'terminal')
  b([]).when(chunk('c1', [item(1)], 7)).thenThrows('batch.not_found')
  b([created(), { type: 'BatchChunkAbandoned', data: { batch_uuid: B, user_uuid: U, chunk_uuid: 'c1', abandoned_at: NOW } }]).when(chunk('c1', [item(1)], 7)).thenThrows('add_chunk.changed', 'an abandoned chunk never comes in late')
  b([created()]).when(chunk('c1', [item(1, true)], 0)).then([added('c1', 0, [item(1, true)], 0), processed('c1', 0, 0)], 'nothing to verify: processed at once')
  b([created()]).when(chunk('c1', [item(1, true)], 0, true)).then([added('c1', 0, [item(1, true)], 0), processed('c1', 0, 0), closed(), completed(1)], 'and with final, completed at once')
  b([created()]).when(chunk('c1', [], 0, true)).then([added('c1', 0, [], 0), processed('c1', 0, 0), closed(), completed(0)], 'an empty final chunk closes intake')
  const many = Array.from({ length: BATCH_PART_ITEMS + 1 }, (_, n) => item(n))
  const events = batch.decide(chunk('c1', many, 7 * many.length, false, 10_000), [created()].reduce(batch.evolve, batch.initialState()))
  t.same(events.map(e => e.type), ['BatchItemsAdded', 'BatchItemsAdded'], `${many.length} items in two parts`)
  t.same(events.map(e => e.type === 'BatchItemsAdded' ? [e.data.part, e.data.first, e.data.items.length, e.data.amount, e.data.chunk_items] : null), [[0, 0, BATCH_PART_ITEMS, 7 * many.length, many.length], [1, BATCH_PART_ITEMS, 1, 0, 0]], 'the first part carries the reservation and the chunk size')
})

t.test('RecordResults, DeferItems and completion', async t => {
  const b = spec(t, batch)
  const open = [created(), added('c1', 0, [item(1), item(2), item(3, true)], 14)]
  b(open).when({ type: 'RecordResults', data: { chunk_uuid: 'c1', results: [result(0)], now: NOW } }).then([recorded('c1', [result(0)])], 'one of two pending items')
  b([...open, recorded('c1', [result(0)])]).when({ type: 'RecordResults', data: { chunk_uuid: 'c1', results: [result(0), result(1, 'unknown', 0)], now: NOW } })
    .then([recorded('c1', [result(1, 'unknown', 0)]), processed('c1', 14, 7)], 'a result recorded twice counts once; the last pending one settles the chunk')
  b([...open, recorded('c1', [result(0)])]).when({ type: 'RecordResults', data: { chunk_uuid: 'c1', results: [result(0)], now: NOW } }).then([], 'a redelivered result: nothing')
  b([...open, closed()]).when({ type: 'RecordResults', data: { chunk_uuid: 'c1', results: [result(0), result(1)], now: NOW } })
    .then([recorded('c1', [result(0), result(1)]), processed('c1', 14, 14), completed(3)], 'intake closed and nothing pending: completed')
  b([...open]).when({ type: 'RecordResults', data: { chunk_uuid: 'c1', results: [result(2), result(7)], now: NOW } }).then([], 'an invalid item (done at intake) and an index outside the chunk: nothing')
  b([...open]).when({ type: 'RecordResults', data: { chunk_uuid: 'nope', results: [result(0)], now: NOW } }).then([], 'an unknown chunk: nothing')
  const defer = { type: 'DeferItems' as const, data: { chunk_uuid: 'c1', items: [{ i: 0, email: 'sealed:1' }, { i: 2, email: 'sealed:3' }], attempt: 1, retry_at: LATER, deadline_at: LATER, now: NOW } }
  b(open).when(defer).then([{ type: 'BatchItemsDeferred', data: { batch_uuid: B, user_uuid: U, chunk_uuid: 'c1', items: [{ i: 0, email: 'sealed:1' }], attempt: 1, retry_at: LATER, deadline_at: LATER, deferred_at: NOW } }], 'only items still pending are deferred')
  b([...open, recorded('c1', [result(0), result(1)]), processed('c1', 14, 14)]).when(defer).then([], 'a settled chunk defers nothing')
})

t.test('CloseIntake and AbandonChunk', async t => {
  const b = spec(t, batch)
  b([created(), added('c1', 0, [item(1)], 7)]).when({ type: 'CloseIntake', data: { reason: 'final', now: NOW } }).then([closed()], 'items pending: processing')
  b([created(), added('c1', 0, [item(1, true)], 0), processed('c1', 0, 0)]).when({ type: 'CloseIntake', data: { reason: 'idle', idle_before: LATER, now: LATER } }).then([closed('idle', LATER), completed(1, LATER)], 'idle with nothing pending: completed')
  b([created(), added('c1', 0, [item(1)], 7, 0, LATER)]).when({ type: 'CloseIntake', data: { reason: 'idle', idle_before: NOW, now: LATER } }).then([], 'a chunk came after the idle mark: intake stays open')
  b([created(), closed()]).when({ type: 'CloseIntake', data: { reason: 'final', now: NOW } }).then([], 'closed already')
  b([created()]).when({ type: 'AbandonChunk', data: { chunk_uuid: 'c9', now: NOW } }).then([{ type: 'BatchChunkAbandoned', data: { batch_uuid: B, user_uuid: U, chunk_uuid: 'c9', abandoned_at: NOW } }], 'a chunk that never came')
  b([created(), added('c1', 0, [item(1)], 7)]).when({ type: 'AbandonChunk', data: { chunk_uuid: 'c1', now: NOW } }).then([], 'an accepted chunk is never abandoned')
})

t.test('states are never changed in place (a refused append leaves the folded state as it was)', async t => {
  const s0 = [created(), added('c1', 0, [item(1)], 7)].reduce(batch.evolve, batch.initialState()) as batch.Live
  const before = JSON.stringify({ ...s0, hashes: s0.hashes?.map(h => [...h]), open: [...s0.open].map(([k, c]) => [k, { ...c, done: [...c.done] }]) })
  for (let n = 2; n < 40; n++) batch.evolve(s0, added(`c${n}`, n - 1, [item(n)], 7))
  batch.evolve(s0, recorded('c1', [result(0)]))
  t.equal(JSON.stringify({ ...s0, hashes: s0.hashes?.map(h => [...h]), open: [...s0.open].map(([k, c]) => [k, { ...c, done: [...c.done] }]) }), before)
  t.notOk(batch.holds(s0, 'h2'))
  const s39 = Array.from({ length: 38 }, (_, k) => added(`c${k + 2}`, k + 1, [item(k + 2)], 7)).reduce(batch.evolve, s0 as batch.BatchState) as batch.Live
  t.ok([1, 2, 20, 39].every(n => batch.holds(s39, `h${n}`)), 'merged segments still hold every item')
  t.ok((s39.hashes?.length ?? 0) <= 17, `${s39.hashes?.length} segments`)
})
