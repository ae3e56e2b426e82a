import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createClient } from '../api.ts'
import { layoutOf } from '../../lists/files.ts'
import { ListFileError } from '../../lists/file-limits.ts'
import type { EstimateResult, VerifyFileOptions, VerifyFileResult } from './options.ts'
import { RunState } from './state.ts'
import { ListError, call } from './call.ts'
import { fingerprint, index } from './read.ts'
import { send } from './send.ts'
import { collect } from './collect.ts'
import { write } from './write.ts'

/**
 * `svc verify-file`: a customer's file through the public
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
  // Kept for `--resume` when the run stops once something was sent (null: decided by that);
  // a run refused before (a bad key, an unknown column, a file beyond a bound) leaves nothing.
  let keep: boolean | null = null
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
    if (state.get('indexed') !== '1') {
      try {
        await index(state, o.input, layout, o.column, o.onProgress)
      } catch (err) {
        // The file is beyond a bound, unreadable, or has no such column: said in a sentence.
        if (err instanceof ListFileError) throw new ListError(err.message, `list.${err.reason}`)
        throw err
      }
    }
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
    if (keep ?? state.sentUpTo() > 0) state.close()
    else state.remove()
  }
}
