// Checkpoints a SQLite file's WAL off the main thread (the event store's and the read
// store's). SQLite's automatic checkpoint runs inside the commit that crosses its
// threshold, copying the WAL into the database with an fsync, which stalls that commit
// (and the whole event loop, node:sqlite being synchronous) for milliseconds every few
// hundred appends, and for seconds over a rebuild. Here a second connection, in a worker
// thread (the other core), checkpoints PASSIVE (never waiting for readers or writers)
// every `interval_ms`; the owner turns its automatic checkpoints off.
import { once } from 'node:events'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { DatabaseSync } from 'node:sqlite'

/**
 * The worker checkpointing `file` every `intervalMs` (ms) until `close`, which checkpoints
 * once more and waits for the thread to end. The thread does not keep the process alive.
 */
export class WalCheckpointer {
  private readonly worker: Worker
  constructor (file: string, intervalMs: number) {
    this.worker = new Worker(new URL(import.meta.url), { workerData: { wal_checkpointer: { file, interval_ms: intervalMs } } })
    this.worker.on('error', err => { console.error(`WAL checkpointer of ${file} failed`, err) })
    this.worker.unref()
  }

  async close (): Promise<void> {
    this.worker.ref()
    this.worker.postMessage('close')
    await once(this.worker, 'exit')
  }
}

// In the thread WalCheckpointer starts (marked by its workerData), not in any other that imports this module.
if (!isMainThread && parentPort !== null && (workerData as { wal_checkpointer?: unknown } | null)?.wal_checkpointer !== undefined) runCheckpointer()

function runCheckpointer (): void {
  const { file, interval_ms: intervalMs } = (workerData as { wal_checkpointer: { file: string, interval_ms: number } }).wal_checkpointer
  let db: DatabaseSync | null = null
  const checkpoint = (): void => {
    try {
      db ??= new DatabaseSync(file, { timeout: 1_000 })
      db.exec('PRAGMA wal_checkpoint(PASSIVE)')
    } catch {
      // Busy, or the file is gone (its store was closed and removed): the next tick tries again.
    }
  }
  const timer = setInterval(checkpoint, intervalMs)
  parentPort!.on('message', () => {
    clearInterval(timer)
    checkpoint()
    db?.close()
    parentPort!.close()
  })
}
