import { parse } from 'csv-parse'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ApiClient } from '../api.ts'
import { addressKey } from '../../lists/files.ts'
import { FLAG_COLUMNS } from '../../lists/merge.ts'
import type { RunState, Part } from './state.ts'
import type { VerifyFileOptions } from './options.ts'
import { ListError, call } from './call.ts'

/**
 * Phase 3b: each batch waited for (`wait`), its results streamed as CSV into the state.
 * Interrupted, it waits no more but still takes what is done (Ctrl-C keeps the results).
 */
export async function collect(api: ApiClient, o: VerifyFileOptions, state: RunState, unique: number): Promise<void> {
  for (const part of state.parts()) {
    if (part.batch_uuid === 'local' || state.resultsIn(part.first, part.count) === part.count) continue
    while (o.signal?.aborted !== true && part.final) {
      const b = await call(
        'waiting for the batch',
        o.api_url,
        async () => await api.GET('/api/batches/{uuid}', { params: { path: { uuid: part.batch_uuid }, query: { wait: o.wait_s ?? 1 } }, signal: o.signal }),
        { signal: o.signal }
      ).catch((err: unknown) => {
        if (o.signal?.aborted === true) return null
        throw err
      })
      if (b === null) break
      o.onProgress?.('verify', state.results() - state.resultsIn(part.first, part.count) + b.progress.processed, unique)
      if (b.status === 'completed') break
    }
    await store(api, o, state, part)
    o.onProgress?.('verify', state.results(), unique)
  }
  if (o.signal?.aborted === true) throw new ListError('stopped (interrupted): run again with --resume to go on')
}

/** A CSV row's index in its batch, from 0 (the CSV says `position`, from 1). */
const indexOf = (r: Record<string, string>): number => Number(r.position) - 1

/** The done results of a part's batch, streamed (`Accept: text/csv`), into the state; each checked against the address sent. */
async function store(api: ApiClient, o: VerifyFileOptions, state: RunState, part: Part): Promise<void> {
  const stream = await call(
    'reading the results',
    o.api_url,
    async () =>
      await api.GET('/api/batches/{uuid}/results', {
        // The values as they are (a program reads them, not a spreadsheet): the output's writer neutralises formulas itself.
        params: { path: { uuid: part.batch_uuid }, query: { formula_escape: 'false' } },
        headers: { accept: 'text/csv' },
        parseAs: 'stream'
      })
  )
  const parser = parse({ columns: true })
  // Piped with back-pressure: the answer is read as fast as its rows are stored, never buffered whole.
  const reading = pipeline(Readable.fromWeb(stream as unknown as import('node:stream/web').ReadableStream<Uint8Array>), parser)
  const sent = new Map<number, string>()
  let batchOf: Array<Record<string, string>> = []
  const flush = (): void => {
    const from = part.first + indexOf(batchOf[0])
    for (const a of state.addressesFrom(from, indexOf(batchOf[batchOf.length - 1]) - indexOf(batchOf[0]) + 1)) sent.set(a.seq, a.email)
    state.transaction(() => {
      for (const r of batchOf) {
        const seq = part.first + indexOf(r)
        if (r.status !== 'done') continue
        const email = sent.get(seq)
        if (
          email === undefined ||
          (r.email !== '[erased]' && addressKey(email) !== addressKey(r.email) && !(r.verdict === 'invalid' && r.reason === 'invalid_syntax'))
        )
          throw new ListError(
            `result ${r.position} of batch ${part.batch_uuid} is for ${r.email}, not ${email ?? 'an address sent'}: the results cannot be matched to rows safely`
          )
        state.saveResult(seq, {
          verdict: r.verdict,
          reason: r.reason,
          score: r.score === '' ? null : Number(r.score),
          flags: FLAG_COLUMNS.filter(f => r[f] === 'true').join(' '),
          did_you_mean: r.did_you_mean || null,
          mx_host: r.mx_host || null,
          smtp_provider: r.smtp_provider || null,
          checked_at: r.checked_at || null
        })
      }
    })
    sent.clear()
    batchOf = []
  }
  for await (const record of parser as AsyncIterable<Record<string, string>>) {
    batchOf.push(record)
    if (batchOf.length >= 5_000) flush()
  }
  if (batchOf.length > 0) flush()
  await reading
}
