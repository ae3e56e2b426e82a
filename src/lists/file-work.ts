import { MessageChannel, type MessagePort } from 'node:worker_threads'
import type { Readable, Writable } from 'node:stream'
import { Piscina } from 'piscina'
import { ListFileError, type FileLimits } from './file-limits.ts'
import type { Layout } from './files.ts'
import type { Inspection, MergeItem, MergeTask, InspectTask, Outcome, Preview, PreviewTask, Reply, Request } from './file-worker.ts'
import type { MergeCounts, Verdict } from './merge.ts'

/** How much file work a process takes on (LIST_FILE_THREADS, LIST_FILE_QUEUE, LIST_FILE_PER_ACCOUNT, LIST_FILE_HEAP_MB, LIST_FILE_IDLE_S). */
export interface FileWorkOptions {
  /** Threads reading and merging files at once. */
  threads: number
  /** Tasks waiting for a thread, beyond which a new one is refused (503). */
  queue: number
  /** Tasks of one account, running or waiting, beyond which its next is refused (429). */
  per_account: number
  /** The old-generation heap of each thread (MiB); a file that needs more is refused (413). */
  heap_mb: number
  /** Seconds an idle thread stays before it ends. */
  idle_s: number
}

/** More file work than the process (`service`) or the account (`account`) may have at once. */
export class FileWorkBusy extends Error {
  readonly scope: 'service' | 'account'
  constructor(scope: 'service' | 'account', message: string) {
    super(message)
    this.name = 'FileWorkBusy'
    this.scope = scope
  }
}

/** What a merge needs from the main thread: the file (a fresh read each call), the batch's items and where the output goes. */
export interface MergeInput {
  open: () => Promise<Readable>
  items: (from: number, count: number) => Promise<MergeItem[]>
  /** Items of the batch (the index reads them 1,000 at a time). */
  total: number
  layout: Layout
  out: Layout
  /** Whether CSV text cells that look like formulas are neutralised (on unless the client turned it off for the file). */
  formula_escape: boolean
  column: string | null
  limits: FileLimits
  into: Writable
  /** Only the rows of these verdicts (a download by segment); every row when absent. */
  only?: readonly Verdict[]
}

/**
 * Customers' list files read and merged off the event loop: a pool (piscina) of at most `threads` threads, each with a heap of
 * `heap_mb` MiB (V8's resource limits: a file that needs more ends its thread, not the
 * process), at most `queue` tasks waiting and `per_account` per account. The main thread
 * only relays: the file's bytes as the thread asks for them (64 KiB at a time), the
 * batch's items a page at a time, the output as the client takes it. No file is written.
 */
export class ListFileWork {
  private readonly pool: Piscina
  private readonly options: FileWorkOptions
  private readonly perAccount = new Map<string, number>()

  constructor(options: FileWorkOptions) {
    this.options = options
    this.pool = new Piscina({
      filename: new URL('./file-worker.ts', import.meta.url).href,
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: options.idle_s * 1000,
      maxQueue: options.queue,
      resourceLimits: { maxOldGenerationSizeMb: options.heap_mb, maxYoungGenerationSizeMb: 16 }
    })
  }

  /** Tasks running or waiting now (a gauge). */
  get pending(): number {
    let n = 0
    for (const v of this.perAccount.values()) n += v
    return n
  }

  /**
   * Reads a file through and says what it is (its rows, widest row, header and address column).
   * @throws ListFileError for a file beyond its limits or unreadable; FileWorkBusy.
   */
  async inspect(
    account: string,
    input: { open: () => Promise<Readable>; layout: Layout; column: string | null; limits: FileLimits },
    signal?: AbortSignal
  ): Promise<Inspection> {
    const { port, host } = this.channel(input.open, null, null, null)
    try {
      return (await this.task(
        account,
        { op: 'inspect', port, layout: input.layout, column: input.column, limits: input.limits } satisfies InspectTask,
        port,
        signal
      )) as Inspection
    } finally {
      host.close()
    }
  }

  /**
   * Reads a file through twice and says what it holds as a person checks it before paying:
   * its shape, its first rows, its addresses (unique, in order), repeats and empty rows.
   * @throws ListFileError for a file beyond its limits or unreadable; FileWorkBusy.
   */
  async preview(
    account: string,
    input: { open: () => Promise<Readable>; layout: Layout; column: string | null; limits: FileLimits },
    signal?: AbortSignal
  ): Promise<Preview> {
    const { port, host } = this.channel(input.open, null, null, null)
    try {
      return (await this.task(
        account,
        { op: 'preview', port, layout: input.layout, column: input.column, limits: input.limits } satisfies PreviewTask,
        port,
        signal
      )) as Preview
    } finally {
      host.close()
    }
  }

  /**
   * Merges a file with its batch's results into `input.into`. `ready` resolves once the
   * file was read through and found sound and the index is built — before the first byte
   * of output, so that a refusal can still be a problem answer — and rejects as `done`
   * does when it fails before; `done` resolves with the counts once the output ended.
   * @throws FileWorkBusy (at once, not through the promises).
   */
  merge(account: string, input: MergeInput, signal?: AbortSignal): { ready: Promise<void>; done: Promise<MergeCounts> } {
    let markReady!: () => void
    const ready = new Promise<void>(resolve => {
      markReady = resolve
    })
    const { port, host } = this.channel(input.open, input.items, input.into, () => markReady())
    const task: MergeTask = {
      op: 'merge',
      port,
      layout: input.layout,
      out: input.out,
      formula_escape: input.formula_escape,
      column: input.column,
      limits: input.limits,
      items: input.total,
      ...(input.only && { only: input.only })
    }
    const done = this.task(account, task, port, signal).finally(() => {
      host.close()
    }) as Promise<MergeCounts>
    // A merge refused before it was ready is answered through `ready`: its `done` must not go unhandled then.
    done.catch(() => {})
    return { ready: Promise.race([ready, done.then(() => undefined)]), done }
  }

  /** Stops the threads (at shutdown; tasks still running are ended). */
  async close(): Promise<void> {
    await this.pool.destroy()
  }

  private async task(
    account: string,
    task: InspectTask | PreviewTask | MergeTask,
    port: MessagePort,
    signal?: AbortSignal
  ): Promise<Inspection | Preview | MergeCounts> {
    const mine = this.perAccount.get(account) ?? 0
    if (mine >= this.options.per_account) throw new FileWorkBusy('account', `at most ${this.options.per_account} list files of an account are read at once`)
    if (this.pool.queueSize >= this.options.queue) throw new FileWorkBusy('service', 'the service is reading many list files at once')
    this.perAccount.set(account, mine + 1)
    let outcome: Outcome<Inspection | Preview | MergeCounts>
    try {
      outcome = (await this.pool.run(task, { transferList: [port] as never, signal })) as Outcome<Inspection | Preview | MergeCounts>
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY')
        throw new ListFileError('expands_too_much', `reading this file needs more than ${this.options.heap_mb} MiB of memory: save it as CSV, or split it`)
      throw err
    } finally {
      const left = (this.perAccount.get(account) ?? 1) - 1
      if (left === 0) this.perAccount.delete(account)
      else this.perAccount.set(account, left)
    }
    if (!outcome.ok) throw new ListFileError(outcome.reason, outcome.message)
    return outcome.value
  }

  /** The task's port (for the thread) and its main-thread end, answering the thread's requests. */
  private channel(
    open: () => Promise<Readable>,
    items: MergeInput['items'] | null,
    into: Writable | null,
    onReady: (() => void) | null
  ): { port: MessagePort; host: { close(): void } } {
    const { port1, port2 } = new MessageChannel()
    const streams = new Map<number, { stream: Readable; chunks: AsyncIterator<Buffer> }>()
    let nextStream = 0
    const answer = async (m: Request): Promise<Omit<Reply, 'id'>> => {
      switch (m.kind) {
        case 'open': {
          const stream = await open()
          const n = nextStream++
          streams.set(n, { stream, chunks: (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]() })
          return { stream: n }
        }
        case 'pull': {
          const s = streams.get(m.stream)
          if (!s) return { data: null }
          const next = await s.chunks.next()
          if (next.done) {
            streams.delete(m.stream)
            return { data: null }
          }
          return { data: new Uint8Array(next.value) }
        }
        case 'close': {
          streams.get(m.stream)?.stream.destroy()
          streams.delete(m.stream)
          return {}
        }
        case 'items':
          if (!items) throw new Error('no items for this task')
          return { items: await items(m.from, m.count) }
        case 'out': {
          if (!into || into.destroyed) throw new Error('the output is closed')
          if (!into.write(m.data)) await drained(into)
          return {}
        }
        case 'ready':
          onReady?.()
          return {}
      }
    }
    port1.on('message', (m: Request & { id: number }) => {
      answer(m).then(
        reply => {
          port1.postMessage({ id: m.id, ...reply }, reply.data ? [reply.data.buffer as ArrayBuffer] : [])
        },
        err => {
          port1.postMessage({ id: m.id, error: (err as Error).message })
        }
      )
    })
    return {
      port: port2,
      host: {
        close: () => {
          for (const s of streams.values()) s.stream.destroy()
          streams.clear()
          port1.close()
        }
      }
    }
  }
}

/** Resolves when `stream` drains; rejects when it closes first (the client went away). */
async function drained(stream: Writable): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const done = (err?: Error): void => {
      stream.off('drain', onDrain)
      stream.off('close', onClose)
      if (err) reject(err)
      else resolve()
    }
    const onDrain = (): void => done()
    const onClose = (): void => done(new Error('the output closed'))
    stream.on('drain', onDrain)
    stream.on('close', onClose)
  })
}
