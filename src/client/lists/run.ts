import { existsSync, mkdirSync, readdirSync, rmSync, statSync, openSync, readSync, closeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { basename, extname, join } from 'node:path'
import { parse } from 'csv-parse'
import pRetry, { AbortError } from 'p-retry'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createClient, type ApiClient } from '../api.ts'
import {
  ADDRESS_LIKE,
  addressKey,
  cellText,
  formatOf,
  layoutOf,
  openWriter,
  readRows,
  shapeOf,
  type Layout,
  type Row,
  type RowWriter
} from '../../lists/files.ts'
import { headerRow, mergeRows, VERDICTS, type ListShape, type MergeCounts, type Verdict } from '../../lists/merge.ts'
import { RunState, type Part } from './state.ts'

/**
 * `svc verify-file` (issue "Lists at leader parity"): a customer's file through the public
 * API, as a customer's program would do it (the generated client, `wait`), and back as the
 * same file with result columns. Four phases, each resumable:
 *
 * 1. read: the file streamed once; each row's address de-duplicated into the run's state
 *    (SQLite beside the output, `RunState`), in order of first appearance;
 * 2. estimate: `POST /api/batches/estimate` — the cost against the balance before anything
 *    is spent; a list the balance cannot cover is refused unless `partial`;
 * 3. verify: the unique addresses sent in chunks to batches (a new batch when one is full
 *    or its intake closed), each batch waited for with `wait`, its results streamed as CSV
 *    into the state;
 * 4. write: the file streamed again, every row out in order with its columns and the
 *    result columns; a duplicate row carries its first occurrence's result, an empty or
 *    unparsable row stays, a row not verified yet says `pending`.
 *
 * Whatever stops phase 3 (a 402, an unreachable service, Ctrl-C), phase 4 still writes
 * what is known, and the state stays for `resume`; it is removed when every row has its
 * result. Memory: one chunk, one row, SQLite's page cache — not the list.
 */

export { VERDICTS } from '../../lists/merge.ts'

export interface VerifyFileOptions {
  input: string
  /** The output file (its format by its extension; the input's when it has the same). */
  out?: string
  /** A directory for one file per verdict (`valid.csv`…) and `unverified.csv`. */
  split?: string
  /** Only rows of these verdicts in `out`. */
  only?: Verdict[]
  /** Replace an existing output (and an interrupted run's state). */
  force?: boolean
  api_url: string
  api_key: string
  /** Addresses per request (at most the plan's `max_chunk_size`, the default). */
  chunk_size?: number
  /** The column of addresses: a header name or a 1-based number (detected otherwise). */
  column?: string
  checks?: string[]
  /** The batches' name (the input's file name by default). */
  name?: string
  /** Only say what the list would cost (nothing is sent). */
  estimate?: boolean
  /** Verify what the balance covers, write those results, say what the rest needs. */
  partial?: boolean
  /** Go on with the interrupted run whose state is beside the output. */
  resume?: boolean
  /** Progress: phase, done, total (null while unknown). */
  onProgress?: (phase: 'read' | 'verify' | 'write', done: number, total: number | null) => void
  /** Stops sending and waiting (Ctrl-C): what is known is written, the state kept. */
  signal?: AbortSignal
  /** Seconds each wait for a batch may last (the interface's `wait`, at most 30; 1 by default, for a progress bar that moves). */
  wait_s?: number
}

export interface VerifyFileResult extends MergeCounts {
  rows: number
  unique: number
  valid: number
  batches: string[]
  cost_per_address: number
  balance: number | null
  /** Tokens the addresses not verified yet need (0 when complete). */
  tokens_needed: number
  complete: boolean
  out: string | null
  split: Record<string, string> | null
  state: string | null
  /** Why the run stopped before the end, when it did. */
  stopped: string | null
  /** Wall time of each phase in this run (ms): reading the file, the estimate, verifying (sending and waiting), writing the output. */
  timings_ms: { read: number; estimate: number; verify: number; write: number }
}

export interface EstimateResult {
  rows: number
  unique: number
  valid: number
  cost_per_address: number
  cost: number
  balance: number
  covered: number
  checks: string[]
}

/** A failure said in a sentence (exit 1, no stack trace). `code` is the API's problem code when there is one. */
export class ListError extends Error {
  readonly code: string | null
  readonly status: number | null
  constructor(message: string, code: string | null = null, status: number | null = null) {
    super(message)
    this.name = 'ListError'
    this.code = code
    this.status = status
  }
}

/**
 * One API call: its data, or a ListError that says what went wrong in a sentence (a 401 as
 * a refused key, a network error as an unreachable service). Retried (p-retry, backing off)
 * when `retryOn` says so — by default on 429 (after its Retry-After), 5xx and network
 * errors; a creation, which must not happen twice, passes its own.
 */
async function call<T>(
  what: string,
  api_url: string,
  attempt: () => Promise<{ data?: T; error?: unknown; response: Response }>,
  options: { retryOn?: (status: number | null) => boolean; signal?: AbortSignal } = {}
): Promise<T> {
  const retryOn = options.retryOn ?? (status => status === null || status === 429 || status >= 500)
  return await pRetry(
    async () => {
      let r: { data?: T; error?: unknown; response: Response }
      try {
        r = await attempt()
      } catch (err) {
        if ((err as Error).name === 'AbortError') throw new AbortError(new ListError('stopped (interrupted): run again with --resume to go on'))
        const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message
        const error = new ListError(`cannot reach the service at ${api_url} (${cause})`)
        throw retryOn(null) ? error : new AbortError(error)
      }
      if (r.response.ok && r.data !== undefined) return r.data
      const problem = (r.error ?? {}) as { code?: string; detail?: string; title?: string }
      const status = r.response.status
      const said =
        status === 401
          ? 'the API key was refused (unknown, revoked or mistyped: check --api-key or SVC_API_KEY)'
          : `${problem.detail ?? problem.title ?? r.response.statusText}`
      const error = new ListError(`${what}: ${said}`, problem.code ?? null, status)
      if (!retryOn(status)) throw new AbortError(error)
      const after = Number(r.response.headers.get('retry-after'))
      if (status === 429 && Number.isFinite(after) && after > 0) await new Promise(resolve => setTimeout(resolve, Math.min(after, 60) * 1000))
      throw error
    },
    { retries: 6, minTimeout: 250, maxTimeout: 10_000, ...(options.signal && { signal: options.signal }) }
  )
}

/** A fingerprint of the input (size, modification time, first 64 KiB): a resumed run refuses a changed file. */
function fingerprint(path: string): string {
  const st = statSync(path)
  const fd = openSync(path, 'r')
  const head = Buffer.alloc(65_536)
  const n = readSync(fd, head, 0, head.length, 0)
  closeSync(fd)
  return `${st.size}:${Math.round(st.mtimeMs)}:${createHash('sha256').update(head.subarray(0, n)).digest('hex').slice(0, 16)}`
}

const SAMPLE_ROWS = 1_000

/** Phase 1: the rows into the state (unique addresses in order), the header and address column decided from the first rows. */
async function index(state: RunState, input: string, layout: Layout, column: string | undefined, progress: VerifyFileOptions['onProgress']): Promise<void> {
  let sample: Row[] | null = []
  let shape: ReturnType<typeof shapeOf> | null = null
  let rows = 0
  let width = 0
  let unique = 0
  let pending: Row[] = []
  const flush = (): void => {
    state.transaction(() => {
      for (const row of pending) {
        const k = rows++
        width = Math.max(width, row.cells.length)
        if (k === 0 && shape!.header !== null) continue
        if (row.unparsable) continue
        const text = cellText(row.cells[shape!.column] ?? null).trim()
        if (text === '') continue
        if (state.unit(unique, addressKey(text), text, ADDRESS_LIKE.test(text)).added) unique++
      }
    })
    pending = []
    progress?.('read', rows, null)
  }
  for await (const row of readRows(input, layout)) {
    if (sample !== null) {
      sample.push(row)
      if (sample.length < SAMPLE_ROWS) continue
      shape = shapeOf(sample, column)
      pending = sample
      sample = null
      flush()
      continue
    }
    pending.push(row)
    if (pending.length >= 10_000) flush()
  }
  if (sample !== null) {
    shape = shapeOf(sample, column)
    pending = sample
  }
  flush()
  state.set('header', JSON.stringify(shape!.header))
  state.set('column', String(shape!.column))
  state.set('rows', String(rows - (shape!.header !== null ? 1 : 0)))
  state.set('lines', String(rows))
  state.set('width', String(Math.max(width, shape!.header?.length ?? 0)))
  state.set('indexed', '1')
}

/** Verifies a list file through the API (see the module's comment). @throws ListError with a sentence for anything that stops it before phase 4. */
export async function verifyFile(o: VerifyFileOptions): Promise<VerifyFileResult | EstimateResult> {
  if (!o.estimate && o.out === undefined && o.split === undefined) throw new ListError('say where results go: --out <file>, --split <dir>, or both')
  const layout = (() => {
    try {
      return layoutOf(o.input)
    } catch (err) {
      throw new ListError((err as Error).message)
    }
  })()
  const statePath =
    o.out !== undefined
      ? `${o.out}.state.sqlite`
      : o.split !== undefined
        ? join(o.split, '.verify-file.state.sqlite')
        : join(`${o.input}.estimate.state.sqlite`)
  if (!o.estimate) {
    if (o.resume && !existsSync(statePath)) throw new ListError(`nothing to resume: no run's state at ${statePath}`)
    if (!o.resume && existsSync(statePath) && !o.force)
      throw new ListError(`an interrupted run's state is at ${statePath}: --resume to finish it (or --force to start again)`)
    if (!o.resume && !o.force && o.out !== undefined && existsSync(o.out)) throw new ListError(`${o.out} exists: --force to replace it`)
    if (
      !o.resume &&
      !o.force &&
      o.split !== undefined &&
      existsSync(o.split) &&
      readdirSync(o.split).some(f => /^(valid|risky|invalid|unknown|unverified)\./.test(f))
    )
      throw new ListError(`${o.split} holds results already: --force to replace them`)
  }
  if (o.force && !o.resume) for (const suffix of ['', '-wal', '-shm']) rmSync(statePath + suffix, { force: true })
  if (o.split !== undefined) mkdirSync(o.split, { recursive: true })
  const state = new RunState(statePath)
  let keep = true
  try {
    const print = fingerprint(o.input)
    if (state.get('fingerprint') !== null && state.get('fingerprint') !== print)
      throw new ListError(`${o.input} changed since the run began: start again with --force`)
    state.set('fingerprint', print)
    const clock = { t: performance.now() }
    const lap = (): number => {
      const now = performance.now()
      const ms = Math.round(now - clock.t)
      clock.t = now
      return ms
    }
    const timings = { read: 0, estimate: 0, verify: 0, write: 0 }
    if (state.get('indexed') !== '1') await index(state, o.input, layout, o.column, o.onProgress)
    timings.read = lap()
    const rows = Number(state.get('rows'))
    const unique = state.units()
    const valid = state.validFrom(0)
    const api = createClient({ baseUrl: o.api_url, token: o.api_key })
    const sentUpTo = state.sentUpTo()
    const remainingValid = state.validFrom(sentUpTo)
    const estimate = await call(
      'estimating the list',
      o.api_url,
      async () => await api.POST('/api/batches/estimate', { body: { addresses: remainingValid, ...(o.checks && { checks: o.checks }) } }),
      { signal: o.signal }
    )
    if (o.estimate) {
      keep = false
      return {
        rows,
        unique,
        valid,
        cost_per_address: estimate.cost_per_address,
        cost: estimate.cost,
        balance: estimate.balance,
        covered: estimate.covered,
        checks: estimate.checks
      }
    }
    if (estimate.cost > estimate.balance && !o.partial) {
      const needs = estimate.cost - estimate.balance
      keep = sentUpTo > 0
      throw new ListError(
        `the list needs ${estimate.cost} tokens (${remainingValid} addresses at ${estimate.cost_per_address}) and the balance is ${estimate.balance}: top up ${needs} tokens, or run with --partial to verify the first ${estimate.covered} now`,
        'list.insufficient_tokens',
        402
      )
    }
    timings.estimate = lap()
    const endSeq = estimate.cost > estimate.balance ? state.seqAfterValid(sentUpTo, estimate.covered) : unique
    if (o.partial && endSeq === sentUpTo && remainingValid > 0)
      throw new ListError(
        `the balance (${estimate.balance} tokens) covers no address at ${estimate.cost_per_address} each: top up, then --resume`,
        'list.insufficient_tokens',
        402
      )
    const chunkSize = Math.max(1, Math.min(o.chunk_size ?? estimate.max_chunk_size, estimate.max_chunk_size))
    let stopped: string | null = null
    try {
      await send(api, o, state, endSeq, chunkSize, estimate.max_batch_size)
    } catch (err) {
      if (!(err instanceof ListError) && !(err instanceof Error && err.name === 'AbortError')) throw err
      stopped = err instanceof ListError ? err.message : 'stopped (interrupted)'
    }
    try {
      await collect(api, o, state, unique)
    } catch (err) {
      if (!(err instanceof ListError) && !(err instanceof Error && err.name === 'AbortError')) throw err
      stopped ??= err instanceof ListError ? err.message : 'stopped (interrupted)'
    }
    timings.verify = lap()
    const written = await write(o, state, layout)
    timings.write = lap()
    const complete = state.units() === state.results()
    const needed = state.validUnverified() * estimate.cost_per_address
    keep = !complete
    return {
      rows,
      unique,
      valid,
      ...written,
      batches: state
        .parts()
        .filter(p => p.batch_uuid !== 'local')
        .map(p => p.batch_uuid),
      cost_per_address: estimate.cost_per_address,
      balance: estimate.balance,
      tokens_needed: complete ? 0 : needed,
      complete,
      out: o.out ?? null,
      state: complete ? null : statePath,
      stopped: stopped ?? (complete ? null : `the balance covered ${state.results()} of ${unique} addresses`),
      timings_ms: timings
    }
  } finally {
    if (keep) state.close()
    else state.remove()
  }
}

/** The part sending goes on in: the last one if its batch still takes chunks (its count set to what the batch holds), else none. */
async function openPart(api: ApiClient, o: VerifyFileOptions, state: RunState): Promise<Part | null> {
  const last = state.parts().at(-1)
  if (!last || last.final || last.batch_uuid === 'local') return null
  const b = await call(
    'reading the batch',
    o.api_url,
    async () => await api.GET('/api/batches/{uuid}', { params: { path: { uuid: last.batch_uuid }, query: { wait: 0 } } }),
    { signal: o.signal }
  )
  // A chunk whose answer was lost (a kill, a dropped connection) is in the batch: count it.
  const part = { ...last, count: b.progress.total, final: b.intake === 'closed' }
  state.savePart(part)
  return part.final ? null : part
}

/** Phase 3a: the unique addresses from where the parts end up to `endSeq`, in chunks, a new batch when one is full or closed. */
async function send(api: ApiClient, o: VerifyFileOptions, state: RunState, endSeq: number, chunkSize: number, maxBatch: number): Promise<void> {
  let part = await openPart(api, o, state)
  let seq = state.sentUpTo()
  let size = chunkSize
  const name = o.name ?? basename(o.input)
  while (seq < endSeq) {
    if (o.signal?.aborted) throw new ListError('stopped (interrupted): run again with --resume to go on')
    // A batch holds at most `maxBatch` valid addresses: the chunk stops where its batch would be full.
    const room = maxBatch - (part === null ? 0 : state.validFrom(part.first) - state.validFrom(part.first + part.count))
    const chunk: Array<{ seq: number; email: string; valid: boolean }> = []
    let validIn = 0
    for (const a of state.addressesFrom(seq, Math.min(size, endSeq - seq))) {
      if (a.valid && validIn === room) break
      if (a.valid) validIn++
      chunk.push(a)
    }
    const last = chunk[chunk.length - 1].seq + 1
    const final = last >= endSeq || validIn >= room
    const emails = chunk.map(a => a.email)
    try {
      if (part === null) {
        const since = Date.now()
        // A creation is not retried blindly (a lost answer would make two batches): only a 429, which changed nothing; a lost one is looked for.
        const created = await call(
          'sending the list',
          o.api_url,
          async () => await api.POST('/api/batches', { body: { emails, final, name, ...(o.checks && { checks: o.checks }) } }),
          { signal: o.signal, retryOn: status => status === 429 }
        ).catch(async (err: unknown) => (await adoptLost(api, o, name, since, emails.length)) ?? Promise.reject(err))
        part = { n: state.parts().length, batch_uuid: created.uuid, first: seq, count: created.progress.total, final: created.intake === 'closed' || final }
      } else {
        const open = part
        const added = await call(
          'sending the list',
          o.api_url,
          async () => await api.POST('/api/batches/{uuid}/emails', { params: { path: { uuid: open.batch_uuid } }, body: { emails, final } }),
          { signal: o.signal }
        )
        part = { ...part, count: added.progress.total, final: added.intake === 'closed' }
      }
    } catch (err) {
      if (err instanceof ListError && /\.too_many$/.test(err.code ?? '') && size > 1) {
        size = Math.max(1, Math.floor(size / 2))
        continue
      }
      if (err instanceof ListError && err.code === 'create_batch.all_rejected') {
        // Not one address of the chunk is valid: the service said so; they are invalid here, at no cost.
        state.transaction(() => {
          for (const a of chunk)
            state.saveResult(a.seq, {
              verdict: 'invalid',
              reason: 'invalid_syntax',
              score: 0,
              flags: '',
              did_you_mean: null,
              mx_host: null,
              smtp_provider: null,
              checked_at: null
            })
        })
        state.savePart({ n: state.parts().length, batch_uuid: 'local', first: seq, count: chunk.length, final: true })
        seq = last
        continue
      }
      // The batch took no more (its intake closed meanwhile, or it is full by the service's count): the rest goes to a new one.
      if (err instanceof ListError && part !== null && (err.code === 'add_chunk.intake_closed' || err.code === 'add_chunk.max_batch_size')) {
        state.savePart({ ...part, final: true })
        part = null
        continue
      }
      throw err
    }
    if (part.first + part.count !== last)
      throw new ListError(
        `the batch ${part.batch_uuid} holds ${part.count} addresses where ${last - part.first} were sent: the service merged addresses this client kept apart; the results cannot be matched to rows safely`
      )
    state.savePart(part)
    seq = last
    if (part.final) part = null
    o.onProgress?.('verify', state.results(), state.units())
  }
}

/**
 * A batch created by a request whose answer was lost (a dropped connection, a 5xx): one
 * named `name`, created since `since`, holding `count` addresses. Null when there is none
 * (the request did not land: it is sent again).
 */
async function adoptLost(
  api: ApiClient,
  o: VerifyFileOptions,
  name: string,
  since: number,
  count: number
): Promise<{ uuid: string; progress: { total: number }; intake: 'open' | 'closed' } | null> {
  const recent = await call('looking for the batch', o.api_url, async () => await api.GET('/api/batches', { params: { query: { limit: 5 } } })).catch(
    () => null
  )
  return recent?.items.find(b => b.name === name && Date.parse(b.created_at) >= since - 5_000 && b.progress.total === count) ?? null
}

/**
 * Phase 3b: each batch waited for (`wait`), its results streamed as CSV into the state.
 * Interrupted, it waits no more but still takes what is done (Ctrl-C keeps the results).
 */
async function collect(api: ApiClient, o: VerifyFileOptions, state: RunState, unique: number): Promise<void> {
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

/** The done results of a part's batch, streamed (`Accept: text/csv`), into the state; each checked against the address sent. */
async function store(api: ApiClient, o: VerifyFileOptions, state: RunState, part: Part): Promise<void> {
  const stream = await call(
    'reading the results',
    o.api_url,
    async () =>
      await api.GET('/api/batches/{uuid}/results', { params: { path: { uuid: part.batch_uuid } }, headers: { accept: 'text/csv' }, parseAs: 'stream' })
  )
  const parser = parse({ columns: true })
  // Piped with back-pressure: the answer is read as fast as its rows are stored, never buffered whole.
  const reading = pipeline(Readable.fromWeb(stream as unknown as import('node:stream/web').ReadableStream<Uint8Array>), parser)
  const sent = new Map<number, string>()
  let batchOf: Array<Record<string, string>> = []
  const flush = (): void => {
    const from = part.first + Number(batchOf[0].index)
    for (const a of state.addressesFrom(from, Number(batchOf[batchOf.length - 1].index) - Number(batchOf[0].index) + 1)) sent.set(a.seq, a.email)
    state.transaction(() => {
      for (const r of batchOf) {
        const seq = part.first + Number(r.index)
        if (r.status !== 'done') continue
        const email = sent.get(seq)
        if (
          email === undefined ||
          (r.email !== '[erased]' && addressKey(email) !== addressKey(r.email) && !(r.verdict === 'invalid' && r.reason === 'invalid_syntax'))
        )
          throw new ListError(
            `result ${r.index} of batch ${part.batch_uuid} is for ${r.email}, not ${email ?? 'an address sent'}: the results cannot be matched to rows safely`
          )
        state.saveResult(seq, {
          verdict: r.verdict,
          reason: r.reason,
          score: r.score === '' ? null : Number(r.score),
          flags: r.flags,
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

/** Phase 4: the input streamed again, every row out with its result columns (filtered and split as asked). */
async function write(o: VerifyFileOptions, state: RunState, layout: Layout): Promise<MergeCounts & { split: Record<string, string> | null }> {
  const shape: ListShape = {
    header: JSON.parse(state.get('header') ?? 'null') as string[] | null,
    column: Number(state.get('column')),
    width: Number(state.get('width'))
  }
  const lines = Number(state.get('lines'))
  const layoutFor = (path: string): Layout => {
    const format = formatOf(path)
    if (format === 'xlsx') return { format: 'xlsx', delimiter: ',', bom: false, newline: '\n' }
    const tab = extname(path).toLowerCase() === '.tsv'
    return layout.format === 'csv' && !tab
      ? { ...layout, format: 'csv' }
      : { format: 'csv', delimiter: tab ? '\t' : layout.format === 'csv' ? layout.delimiter : ',', bom: layout.bom, newline: layout.newline }
  }
  const ext = layout.format === 'xlsx' ? '.xlsx' : layout.format === 'csv' && layout.delimiter === '\t' ? '.tsv' : '.csv'
  const writers: RowWriter[] = []
  const open = async (path: string, header: boolean): Promise<RowWriter> => {
    const w = await openWriter(path, layoutFor(path))
    writers.push(w)
    if (header) await w.write(headerRow(shape))
    return w
  }
  const splits = new Map<string, RowWriter>()
  const splitPaths: Record<string, string> = {}
  const splitFor = async (key: string): Promise<RowWriter> => {
    let w = splits.get(key)
    if (!w) {
      splitPaths[key] = join(o.split!, `${key}${ext}`)
      w = await open(splitPaths[key], true)
      splits.set(key, w)
    }
    return w
  }
  try {
    const all = o.out !== undefined ? await open(o.out, false) : undefined
    if (o.split !== undefined) for (const v of VERDICTS) await splitFor(v)
    const counts = await mergeRows(
      readRows(o.input, layout),
      shape,
      { idOf: key => state.seqOf(key), result: seq => state.result(seq) },
      { all, only: o.only, ...(o.split !== undefined && { split: splitFor }) },
      n => o.onProgress?.('write', n, lines)
    )
    for (const w of writers) await w.close()
    return { ...counts, split: o.split !== undefined ? splitPaths : null }
  } catch (err) {
    for (const w of writers) await w.abort()
    throw err
  }
}
