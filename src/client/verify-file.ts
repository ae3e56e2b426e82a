import { appendFileSync, createReadStream, existsSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { parse } from 'csv-parse'
import { stringify } from 'csv-stringify/sync'
import pRetry, { AbortError } from 'p-retry'

/**
 * `svc verify-file`: a client of the public API (interface "Batches"), as a customer would
 * write one. Streams a CSV (or one address per line) into a batch in chunks, writes each
 * result to the output CSV in input order as soon as it and every result before it are
 * done, and keeps its place in `<out>.state.json`, so that a run started again with
 * `--resume <batch uuid>` sends only what was not sent and writes only what was not
 * written. Sending a chunk again is harmless: the batch drops addresses it holds (no
 * second charge). Memory: one chunk and one page of results.
 */
export interface VerifyFileOptions {
  input: string
  out: string
  api_url: string
  api_key: string
  /** Addresses per request (the plan's `max_chunk_size` at most). */
  chunk_size: number
  /** The CSV column with the addresses (default `email`, else the first column). */
  column?: string
  checks?: string[]
  name?: string
  /** A batch to resume (the run's state file says how far it got). */
  resume?: string
  /** Called as results are written: (written, total rows). */
  onProgress?: (written: number, total: number) => void
  /** Pause between result polls (ms). */
  poll_ms?: number
}

export interface VerifyFileResult { batch_uuid: string, rows: number, unique: number, written: number, by_verdict: Record<string, number> }

/**
 * Where a run stands, saved in `<out>.state.json` after every step: `out_bytes` is the
 * length of the output file that the written results fill (a resumed run cuts anything
 * after it: rows written by a run killed before it could say so are written again, once).
 */
interface RunState { batch_uuid: string, rows_sent: number, final_sent: boolean, results_written: number, out_bytes?: number }

/** An HTTP answer that is not a success; `retryable` for 429, 5xx and network errors. */
export class ApiError extends Error {
  readonly status: number | null
  readonly code: string | null
  constructor (status: number | null, code: string | null, message: string) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.code = code
  }
}

/** One request with retries on 429 (after its Retry-After), 5xx and network errors; any other error answer ends the run. */
async function call (o: VerifyFileOptions, method: string, path: string, body?: unknown): Promise<any> {
  return await pRetry(async () => {
    let res: Response
    try {
      res = await fetch(o.api_url.replace(/\/$/, '') + path, { method, headers: { authorization: `Bearer ${o.api_key}`, accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
    } catch (err) {
      throw new ApiError(null, null, `cannot reach ${o.api_url}: ${(err as Error).message}`)
    }
    const text = await res.text()
    const parsed = text.length > 0 ? JSON.parse(text) : null
    if (res.ok) return parsed
    const error = new ApiError(res.status, parsed?.code ?? null, `${method} ${path}: ${res.status} ${parsed?.detail ?? parsed?.title ?? ''}`.trim())
    if (res.status === 429 || res.status >= 500) {
      const after = Number(res.headers.get('retry-after'))
      if (Number.isFinite(after) && after > 0) await new Promise(resolve => setTimeout(resolve, Math.min(after, 60) * 1000))
      throw error
    }
    throw new AbortError(error)
  }, { retries: 8, minTimeout: 200, maxTimeout: 10_000 })
}

/** The addresses of the input, in order: the `column` of a CSV with a header, or the first field of each line. */
async function * addresses (file: string, column: string | undefined): AsyncGenerator<string> {
  const parser = createReadStream(file).pipe(parse({ relax_column_count: true, skip_empty_lines: true, trim: true, bom: true }))
  let index: number | null = null
  for await (const record of parser as AsyncIterable<string[]>) {
    if (index === null) {
      const wanted = (column ?? 'email').toLowerCase()
      const at = record.findIndex(f => f.toLowerCase() === wanted)
      if (at >= 0) { index = at; continue }
      if (column !== undefined) throw new Error(`no column "${column}" in the header of ${file}`)
      index = 0
    }
    const value = record[index]
    if (value !== undefined && value !== '') yield value
  }
}

const stateFile = (out: string): string => `${out}.state.json`
function saveState (out: string, s: RunState): void {
  writeFileSync(`${stateFile(out)}.tmp`, JSON.stringify(s))
  renameSync(`${stateFile(out)}.tmp`, stateFile(out))
}

/**
 * Runs (or resumes) a file through a batch. @returns the batch, the input's rows, the
 * batch's unique addresses, results written and the batch's verdicts.
 * @throws ApiError on an answer that retrying cannot fix (402 no tokens, 403, 409…).
 */
export async function verifyFile (o: VerifyFileOptions): Promise<VerifyFileResult> {
  let rows = 0
  for await (const _ of addresses(o.input, o.column)) rows++
  let state: RunState | null = null
  if (o.resume !== undefined) {
    const saved = existsSync(stateFile(o.out)) ? JSON.parse(readFileSync(stateFile(o.out), 'utf8')) as RunState : null
    state = saved?.batch_uuid === o.resume ? saved : { batch_uuid: o.resume, rows_sent: 0, final_sent: false, results_written: 0 }
    const b = await call(o, 'GET', `/api/batches/${o.resume}`)
    if (b.intake === 'closed') state.final_sent = true
  }
  const writing = state !== null && state.results_written > 0
  if (!writing) writeFileSync(o.out, stringify([['email', 'verdict', 'reason', 'score', 'flags', 'did_you_mean']]))
  else if (state!.out_bytes !== undefined && existsSync(o.out) && statSync(o.out).size > state!.out_bytes) truncateSync(o.out, state!.out_bytes)
  // Each page of results reaches the file before the state counts it (a buffered stream
  // could lose rows the state already counts), and the state records the file's length.
  const write = async (text: string): Promise<void> => { appendFileSync(o.out, text) }

  /** Writes every done result after the ones written, in order, up to the first that is not done. */
  const drain = async (s: RunState): Promise<boolean> => {
    for (;;) {
      const page = await call(o, 'GET', `/api/batches/${s.batch_uuid}/results?limit=96&offset=${s.results_written}`)
      const done: any[] = []
      for (const item of page.items) { if (item.status !== 'done') break; done.push(item) }
      if (done.length > 0) {
        await write(stringify(done.map(x => [x.email, x.verdict ?? '', x.reason ?? '', x.score ?? '', x.flags.join(' '), x.did_you_mean ?? ''])))
        s.results_written += done.length
        s.out_bytes = statSync(o.out).size
        saveState(o.out, s)
        o.onProgress?.(s.results_written, rows)
      }
      if (done.length < page.items.length || page.items.length < 96) return s.results_written >= page.total && s.final_sent
    }
  }

  let pending: string[] = []
  let seen = 0
  const send = async (chunk: string[], final: boolean): Promise<void> => {
    if (state === null) {
      const b = await call(o, 'POST', '/api/batches', { emails: chunk, final, ...(o.checks && { checks: o.checks }), ...(o.name !== undefined && { name: o.name }) })
      state = { batch_uuid: b.uuid, rows_sent: chunk.length, final_sent: final, results_written: 0 }
    } else {
      await call(o, 'POST', `/api/batches/${state.batch_uuid}/emails`, { emails: chunk, final })
      state.rows_sent += chunk.length
      state.final_sent = final
    }
    saveState(o.out, state)
    await drain(state)
  }
  if (!(state as RunState | null)?.final_sent) {
    const skip = (state as RunState | null)?.rows_sent ?? 0
    for await (const email of addresses(o.input, o.column)) {
      if (seen++ < skip) continue
      pending.push(email)
      // One chunk read ahead, so that the last one goes out with `final: true`.
      if (pending.length > o.chunk_size) {
        await send(pending.slice(0, o.chunk_size), false)
        pending = pending.slice(o.chunk_size)
      }
    }
    await send(pending, true)
  }
  const s = state as unknown as RunState
  while (!(await drain(s))) await new Promise(resolve => setTimeout(resolve, o.poll_ms ?? 500))
  const b = await call(o, 'GET', `/api/batches/${s.batch_uuid}`)
  return { batch_uuid: s.batch_uuid, rows, unique: b.progress.total, written: s.results_written, by_verdict: b.results.by_verdict }
}
