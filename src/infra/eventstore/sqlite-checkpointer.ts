// Worker thread of the SQLite event store: checkpoints the WAL off the main thread.
// SQLite's automatic checkpoint runs inside the commit that crosses its threshold, with an
// fsync, which stalls that commit (and the whole event loop, node:sqlite being synchronous)
// for milliseconds every few hundred appends. Here a second connection checkpoints
// PASSIVE (never waiting for readers or writers) every `interval_ms`.
import { parentPort, workerData } from 'node:worker_threads'
import { DatabaseSync } from 'node:sqlite'

const { file, interval_ms: intervalMs } = workerData as { file: string, interval_ms: number }
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
