import { Readable, Writable } from 'node:stream'
import type { MessagePort } from 'node:worker_threads'
import { DatabaseSync } from 'node:sqlite'
import { addressKey, cellText, readRows, shapeOf, streamWriter, type Layout } from './files.ts'
import { ListFileError, type FileFault, type FileLimits, type Row } from './file-limits.ts'
import { mergeRows, type MergeCounts, type StoredResult, type Verdict } from './merge.ts'

/**
 * The thread that reads and merges customers' list files (see `file-work.ts`, which runs
 * it in a pool with bounded heaps): off the API's event loop, with every bound of the
 * file's `FileLimits`. The file's bytes, the batch's items and the output all cross the
 * task's MessagePort, asked for one piece at a time (the thread pulls; the main thread
 * answers), so memory on both sides holds a piece, never the file. Nothing is written to
 * disk: the merge's index of the batch's items is an in-memory SQLite database.
 */

/** A batch's item as the merge needs it (its address in clear, its result). */
export interface MergeItem extends Omit<StoredResult, 'verdict' | 'reason' | 'flags'> {
  i: number
  email: string
  /** Null while the item has no result. */
  verdict: string | null
  reason: string | null
  flags: string[]
}

/** What a file is: its rows (header and empty ones included), its widest row, its header and the address column (from 0). */
export interface Inspection {
  rows: number
  width: number
  header: string[] | null
  column: number
}

export type InspectTask = { op: 'inspect'; port: MessagePort; layout: Layout; column: string | null; limits: FileLimits }

/** What a file holds, as a person checks it before paying: its shape, its first rows, and its addresses (unique, in order). */
export interface Preview extends Inspection {
  /** The first rows after the header (at most `PREVIEW_SAMPLE`), each cell as text. */
  sample: string[][]
  /** The address column's values, trimmed, each once (the first spelling of a repeat, `addressKey`), in file order; empty cells left out. */
  addresses: string[]
  /** Rows whose address repeats an earlier one. */
  duplicates: number
  /** Rows with no address in the column (empty, or unparsable). */
  empty: number
}

export type PreviewTask = { op: 'preview'; port: MessagePort; layout: Layout; column: string | null; limits: FileLimits }

/** Rows of a preview's sample. */
const PREVIEW_SAMPLE = 5
export type MergeTask = {
  op: 'merge'
  port: MessagePort
  layout: Layout
  out: Layout
  /** Whether CSV text cells that look like formulas are neutralised (see `WriterOptions`). */
  formula_escape: boolean
  column: string | null
  limits: FileLimits
  items: number
  /** Only the rows of these verdicts (a segment); every row when absent. */
  only?: readonly Verdict[]
}

/** A task's outcome: a refusal is a value (its reason and sentence), not a thrown error, so that it crosses the thread whole. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; reason: FileFault; message: string }

/** Requests from this thread to the main thread (see `FileWorkHost` in file-work.ts). */
export type Request =
  | { kind: 'open' }
  | { kind: 'pull'; stream: number }
  | { kind: 'close'; stream: number }
  | { kind: 'items'; from: number; count: number }
  | { kind: 'out'; data: Uint8Array }
  | { kind: 'ready' }

/** The main thread's answers, by request id. */
export type Reply = { id: number; stream?: number; data?: Uint8Array | null; items?: MergeItem[]; error?: string }

/** Requests over the task's port, answered by id. */
class Host {
  private next = 0
  private readonly waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>()
  private readonly port: MessagePort
  constructor(port: MessagePort) {
    this.port = port
    port.on('message', (reply: Reply) => {
      const w = this.waiting.get(reply.id)
      if (!w) return
      this.waiting.delete(reply.id)
      if (reply.error !== undefined) w.reject(new Error(reply.error))
      else w.resolve(reply)
    })
  }

  async call(request: Request, transfer: ArrayBuffer[] = []): Promise<Reply> {
    const id = this.next++
    return await new Promise<Reply>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.port.postMessage({ id, ...request }, transfer)
    })
  }

  /** A new read of the file, from its first byte. */
  open(): Readable {
    let stream: number | null = null
    const readable: Readable = new Readable({
      read: () => {
        void (async () => {
          stream ??= (await this.call({ kind: 'open' })).stream!
          return (await this.call({ kind: 'pull', stream })).data
        })().then(
          data => {
            readable.push(data === null || data === undefined ? null : Buffer.from(data.buffer, data.byteOffset, data.byteLength))
          },
          err => {
            readable.destroy(err as Error)
          }
        )
      },
      destroy: (err, done) => {
        if (stream !== null) void this.call({ kind: 'close', stream }).catch(() => {})
        done(err)
      }
    })
    return readable
  }

  close(): void {
    this.port.close()
  }
}

async function inspectRows(rows: AsyncIterable<Row>, column: string | null, limits: FileLimits): Promise<Inspection> {
  const sample: Row[] = []
  let n = 0
  let width = 0
  for await (const row of rows) {
    if (sample.length < 1_000) sample.push(row)
    n++
    width = Math.max(width, row.cells.length)
  }
  if (n === 0) throw new ListFileError('malformed_file', 'the file holds no row')
  let shape: ReturnType<typeof shapeOf>
  try {
    shape = shapeOf(sample, column ?? undefined)
  } catch (err) {
    throw new ListFileError('malformed_file', (err as Error).message)
  }
  width = Math.max(width, shape.header?.length ?? 0)
  if (n * width > limits.cells)
    throw new ListFileError(
      'too_many_cells',
      `padded to its widest row (${width} cells), the file would hold ${n * width} cells; a file may hold ${limits.cells}`
    )
  return { rows: n, width, header: shape.header, column: shape.column }
}

/** Reads a file twice: its shape (as `inspectRows`), then its sample rows and the address column's values, de-duplicated. Memory: the unique addresses (bounded by `limits.rows`). */
async function previewRows(host: Host, task: PreviewTask): Promise<Preview> {
  const shape = await inspectRows(
    readRows(() => host.open(), task.layout, task.limits),
    task.column,
    task.limits
  )
  const sample: string[][] = []
  const addresses: string[] = []
  const seen = new Set<string>()
  let duplicates = 0
  let empty = 0
  // The header is the first row that parses (as `shapeOf` finds it).
  let header = shape.header !== null
  for await (const row of readRows(() => host.open(), task.layout, task.limits)) {
    if (header && !row.unparsable) {
      header = false
      continue
    }
    if (sample.length < PREVIEW_SAMPLE) sample.push(row.cells.map(c => cellText(c)))
    const text = row.unparsable ? '' : cellText(row.cells[shape.column] ?? null).trim()
    if (text === '') {
      empty++
      continue
    }
    const key = addressKey(text)
    if (seen.has(key)) {
      duplicates++
      continue
    }
    seen.add(key)
    addresses.push(text)
  }
  return { ...shape, sample, addresses, duplicates, empty }
}

/** A task run to its outcome: a ListFileError is a refusal; anything else is thrown (the pool reports it). */
async function outcome<T>(work: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await work() }
  } catch (err) {
    if (err instanceof ListFileError) return { ok: false, reason: err.reason, message: err.message }
    throw err
  }
}

/** The pool's entry point: one task, inspect or merge. */
export default async function run(task: InspectTask | PreviewTask | MergeTask): Promise<Outcome<Inspection | Preview | MergeCounts>> {
  const host = new Host(task.port)
  try {
    if (task.op === 'preview') return await outcome(async () => await previewRows(host, task))
    if (task.op === 'inspect')
      return await outcome(
        async () =>
          await inspectRows(
            readRows(() => host.open(), task.layout, task.limits),
            task.column,
            task.limits
          )
      )
    return await outcome(async () => await merge(host, task))
  } finally {
    host.close()
  }
}

async function merge(host: Host, task: MergeTask): Promise<MergeCounts> {
  const shape = await inspectRows(
    readRows(() => host.open(), task.layout, task.limits),
    task.column,
    task.limits
  )
  const db = new DatabaseSync(':memory:')
  try {
    db.exec(
      'CREATE TABLE items (k TEXT PRIMARY KEY, i INTEGER NOT NULL, verdict TEXT, reason TEXT, score INTEGER, flags TEXT, did_you_mean TEXT, mx_host TEXT, smtp_provider TEXT, checked_at TEXT)'
    )
    const insert = db.prepare('INSERT OR IGNORE INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
    for (let from = 0; from < task.items; from += 1_000) {
      const { items } = await host.call({ kind: 'items', from, count: 1_000 })
      db.exec('BEGIN')
      for (const it of items!)
        insert.run(
          addressKey(it.email),
          it.i,
          it.verdict,
          it.reason,
          it.score,
          it.flags.join(' '),
          it.did_you_mean,
          it.mx_host,
          it.smtp_provider,
          it.checked_at
        )
      db.exec('COMMIT')
    }
    const byKey = db.prepare('SELECT i FROM items WHERE k = ?')
    const byIndex = db.prepare('SELECT verdict, reason, score, flags, did_you_mean, mx_host, smtp_provider, checked_at FROM items WHERE i = ?')
    await host.call({ kind: 'ready' })
    const out = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        const copy = new Uint8Array(chunk)
        host.call({ kind: 'out', data: copy }, [copy.buffer as ArrayBuffer]).then(() => done(), done)
      }
    })
    const writer = await streamWriter(out, task.out, { formula_escape: task.formula_escape })
    try {
      const counts = await mergeRows(
        readRows(() => host.open(), task.layout, task.limits),
        { header: shape.header, column: shape.column, width: shape.width },
        {
          idOf: key => {
            const r = byKey.get(key) as { i: number } | undefined
            return r === undefined ? null : Number(r.i)
          },
          result: i => {
            const r = byIndex.get(i) as (StoredResult & { verdict: string | null }) | undefined
            return r === undefined || r.verdict === null ? null : { ...r, verdict: r.verdict, score: r.score === null ? null : Number(r.score) }
          }
        },
        { all: writer, ...(task.only && { only: task.only }) }
      )
      await writer.close()
      if (!out.writableFinished) await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
      return counts
    } catch (err) {
      await writer.abort()
      throw err
    }
  } finally {
    db.close()
  }
}
