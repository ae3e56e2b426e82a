// Checkpoints SQLite files' WALs off the main thread (the event store's and the read
// store's). SQLite's automatic checkpoint runs inside the commit that crosses its
// threshold, copying the WAL into the database with an fsync, which stalls that commit
// (and the whole event loop, node:sqlite being synchronous) for milliseconds every few
// hundred appends, and for seconds over a rebuild. Here one worker thread per process (the
// other core) holds a connection to each file and checkpoints it PASSIVE (never waiting
// for readers or writers) every `interval_ms`; the owners turn their automatic
// checkpoints off.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { DatabaseSync } from 'node:sqlite'

type ToThread = { add: number; file: string; interval_ms: number } | { remove: number } | { truncate: number; file: string } | { forget: string }
type FromThread = { removed: number } | { truncated: number; outcome: TruncateOutcome }

/** What one attempt at `PRAGMA wal_checkpoint(TRUNCATE)` did: `done` (the WAL is empty), `busy` (a reader holds it back), `error`. */
export type TruncateOutcome = 'done' | 'busy' | 'error'

/**
 * The process's checkpointer thread, started by the first WalCheckpointer and shared by
 * the rest (one thread, whatever the number of stores). It does not keep the process
 * alive, except while a `close` waits for its answer.
 */
class CheckpointerThread {
  private readonly worker: Worker
  private readonly closing = new Map<number, () => void>()
  private readonly truncating = new Map<number, (outcome: TruncateOutcome) => void>()
  private nextRequest = 1
  private exited = false
  constructor() {
    this.worker = new Worker(new URL(import.meta.url), { workerData: { wal_checkpointer: true } })
    this.worker.on('message', (m: FromThread) => {
      if ('removed' in m) {
        this.settle(m.removed)
        return
      }
      this.truncating.get(m.truncated)?.(m.outcome)
      this.truncating.delete(m.truncated)
      this.unrefWhenIdle()
    })
    this.worker.on('error', err => {
      console.error('the WAL checkpointer thread failed', err)
    })
    // A thread that ended (an error) answers no more: the closes waiting on it go on, and the next store starts another.
    this.worker.on('exit', () => {
      this.exited = true
      if (thread === this) thread = null
      for (const id of [...this.closing.keys()]) this.settle(id)
      for (const answer of this.truncating.values()) answer('error')
      this.truncating.clear()
    })
    this.worker.unref()
  }

  private settle(id: number): void {
    this.closing.get(id)?.()
    this.closing.delete(id)
    this.unrefWhenIdle()
  }

  private unrefWhenIdle(): void {
    if (this.closing.size === 0 && this.truncating.size === 0) this.worker.unref()
  }

  /** One attempt at truncating `file`'s WAL in the thread, never waiting for its readers. */
  async truncate(file: string): Promise<TruncateOutcome> {
    if (this.exited) return 'error'
    const id = this.nextRequest++
    return await new Promise<TruncateOutcome>(resolve => {
      this.truncating.set(id, resolve)
      this.worker.ref()
      this.send({ truncate: id, file })
    })
  }

  /** Closes the thread's truncating connection to `file` (its store is closing). */
  forget(file: string): void {
    if (!this.exited) this.send({ forget: file })
  }

  send(message: ToThread): void {
    this.worker.postMessage(message)
  }

  /** Resolves once the thread has checkpointed `id`'s file a last time and closed its connection. */
  async remove(id: number): Promise<void> {
    if (this.exited) return
    await new Promise<void>(resolve => {
      this.closing.set(id, resolve)
      this.worker.ref()
      this.send({ remove: id })
    })
  }
}

let thread: CheckpointerThread | null = null
let nextId = 1

/**
 * Checkpoints `file` every `intervalMs` (ms) in the process's checkpointer thread until
 * `close`, which checkpoints once more and waits until the thread has let go of the file.
 */
export class WalCheckpointer {
  private readonly id = nextId++
  private readonly thread: CheckpointerThread
  constructor(file: string, intervalMs: number) {
    thread ??= new CheckpointerThread()
    this.thread = thread
    this.thread.send({ add: this.id, file, interval_ms: intervalMs })
  }

  async close(): Promise<void> {
    await this.thread.remove(this.id)
  }
}

/**
 * One attempt, in the process's checkpointer thread, at `PRAGMA wal_checkpoint(TRUNCATE)`
 * on `file`: the WAL is copied back and emptied, or `busy` at once when a reader (in any
 * process) holds a snapshot that needs it (no busy wait: the caller retries when it likes).
 * The event loop of the caller never waits on SQLite. Memory: one connection per file.
 */
export async function truncateWal(file: string): Promise<TruncateOutcome> {
  thread ??= new CheckpointerThread()
  return await thread.truncate(file)
}

/** Lets go of the connection `truncateWal` keeps to `file` in the thread. */
export function forgetWal(file: string): void {
  thread?.forget(file)
}

// In the thread CheckpointerThread starts (marked by its workerData), not in any other that imports this module.
if (!isMainThread && parentPort !== null && (workerData as { wal_checkpointer?: unknown } | null)?.wal_checkpointer === true) runThread()

function runThread(): void {
  interface Entry {
    file: string
    db: DatabaseSync | null
    timer: NodeJS.Timeout | null
  }
  const files = new Map<number, Entry>()
  const truncators = new Map<string, DatabaseSync>()
  const truncate = (file: string): TruncateOutcome => {
    try {
      let db = truncators.get(file)
      if (!db) {
        // No busy timeout: a reader holding the WAL answers busy at once.
        db = new DatabaseSync(file, { timeout: 0 })
        truncators.set(file, db)
      }
      const r = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number }
      return Number(r.busy) === 0 ? 'done' : 'busy'
    } catch (err) {
      return /busy|locked/i.test(String(err)) ? 'busy' : 'error'
    }
  }
  const checkpoint = (entry: Entry): void => {
    try {
      entry.db ??= new DatabaseSync(entry.file, { timeout: 1_000 })
      entry.db.exec('PRAGMA wal_checkpoint(PASSIVE)')
    } catch {
      // Busy, or the file is gone (its store was closed and removed): the next tick tries again.
    }
  }
  parentPort!.on('message', (m: ToThread) => {
    if ('truncate' in m) {
      parentPort!.postMessage({ truncated: m.truncate, outcome: truncate(m.file) })
      return
    }
    if ('forget' in m) {
      try {
        truncators.get(m.forget)?.close()
      } catch {}
      truncators.delete(m.forget)
      return
    }
    if ('add' in m) {
      const entry: Entry = { file: m.file, db: null, timer: null }
      // Opened (with its WAL, by a first checkpoint) now rather than at the first tick: the
      // process's descriptors are at their level once its stores are open.
      checkpoint(entry)
      entry.timer = setInterval(() => {
        checkpoint(entry)
      }, m.interval_ms)
      files.set(m.add, entry)
      return
    }
    const entry = files.get(m.remove)
    if (entry) {
      if (entry.timer) clearInterval(entry.timer)
      checkpoint(entry)
      try {
        entry.db?.close()
      } catch {}
      files.delete(m.remove)
    }
    parentPort!.postMessage({ removed: m.remove })
  })
}
