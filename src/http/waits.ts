import type { RecordedEvent } from '../ports/event-store.ts'

/** What wakes a waiting read: the runner's notifications (see `ProjectionRunner.onApplied`, `onAdvance`). */
export interface AppliedSource {
  onApplied(listener: (events: readonly RecordedEvent[]) => void): void
  onAdvance(listener: (position: number) => void): void
  readonly leading: boolean
}

/** The events that end what a client may wait for, and the id they end (a job's, a batch's). */
const TERMINAL: Readonly<Record<string, string>> = { JobCompleted: 'job_uuid', JobFailed: 'job_uuid', BatchCompleted: 'batch_uuid' }
/** A follower (a process that does not project) re-reads waited documents at most this often (ms). */
const FOLLOWER_RECHECK_MS = 250

/**
 * Reads that wait for a job or a batch to end (interface "Answers without polling":
 * `?wait=<seconds>` on `GET /api/verify/{uuid}`, `/api/jobs/{uuid}`, `/api/batches/{uuid}`).
 * A waiting read holds a timer and one entry in a map by id — a small constant of memory,
 * no loop: it is woken when the read models commit the event that ends its job or batch
 * (this process projects), or, where another process projects, when the checkpoints move
 * (at most every 250 ms), then reads its document again.
 */
export class CompletionWaits {
  private readonly waiting = new Map<string, Set<() => void>>()
  private lastFollowerWake = 0
  private followerTimer: NodeJS.Timeout | null = null

  constructor(source: AppliedSource) {
    source.onApplied(events => {
      for (const e of events) {
        const field = TERMINAL[e.type]
        if (field !== undefined) this.wake(String(e.data[field]))
      }
    })
    source.onAdvance(() => {
      if (!source.leading) this.wakeFollowers()
    })
  }

  /** Read waits pending now (a gauge for tests and metrics). */
  get pending(): number {
    let n = 0
    for (const set of this.waiting.values()) n += set.size
    return n
  }

  /**
   * Reads with `read` until `done` says the answer is final or `ms` have passed, whichever
   * comes first; `cancelled` ends the wait early (the client went away). Never waits when
   * `ms` is 0.
   * @returns the last value read.
   */
  async until<T>(id: string, ms: number, read: () => Promise<T>, done: (value: T) => boolean, cancelled?: AbortSignal): Promise<T> {
    let value = await read()
    const deadline = Date.now() + ms
    while (!done(value) && Date.now() < deadline && cancelled?.aborted !== true) {
      await this.next(id, deadline - Date.now(), cancelled)
      value = await read()
    }
    return value
  }

  /** Resolves when `id` is woken, after `ms`, or when `cancelled` fires, whichever is first. */
  private async next(id: string, ms: number, cancelled?: AbortSignal): Promise<void> {
    await new Promise<void>(resolve => {
      const set = this.waiting.get(id) ?? new Set<() => void>()
      this.waiting.set(id, set)
      const finish = (): void => {
        clearTimeout(timer)
        cancelled?.removeEventListener('abort', finish)
        set.delete(finish)
        if (set.size === 0 && this.waiting.get(id) === set) this.waiting.delete(id)
        resolve()
      }
      const timer = setTimeout(finish, Math.max(0, ms))
      cancelled?.addEventListener('abort', finish, { once: true })
      set.add(finish)
    })
  }

  private wake(id: string): void {
    const set = this.waiting.get(id)
    if (set) for (const finish of [...set]) finish()
  }

  /** Wakes every waiting read, at most every FOLLOWER_RECHECK_MS (a follower does not know which events its checkpoints passed). */
  private wakeFollowers(): void {
    if (this.followerTimer !== null) return
    const due = this.lastFollowerWake + FOLLOWER_RECHECK_MS - Date.now()
    this.followerTimer = setTimeout(
      () => {
        this.followerTimer = null
        this.lastFollowerWake = Date.now()
        for (const id of [...this.waiting.keys()]) this.wake(id)
      },
      Math.max(0, due)
    )
    this.followerTimer.unref()
  }
}
