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

/** How many reads may wait at once: per account (all its credentials together) and in this process. 0 refuses every wait. */
export interface WaitLimits {
  per_account: number
  per_process: number
}

/** Why a read that asked to wait was answered at once: its account, or this process, already held as many waiting reads as it may. */
type WaitRefusal = 'account_limit' | 'service_limit'

/** A waited read's last value, and whether its wait was refused (null: it waited as asked, or had no need to). */
export interface WaitOutcome<T> {
  value: T
  refused: WaitRefusal | null
}

/**
 * Reads that wait for a job or a batch to end (interface "Answers without polling":
 * `?wait=<seconds>` on `GET /api/verify/{uuid}`, `/api/jobs/{uuid}`, `/api/batches/{uuid}`).
 * A waiting read holds a timer and one entry in a map by id — a small constant of memory,
 * no loop: it is woken when the read models commit the event that ends its job or batch
 * (this process projects), or, where another process projects, when the checkpoints move
 * (at most every 250 ms), then reads its document again.
 *
 * Bounded (issue 42, item 4): at most `limits.per_account` reads of one account and
 * `limits.per_process` in all wait at once; a read past either is answered at once with
 * what it read (as `wait=0`), its refusal said. Each waiting read also holds its client's
 * connection, which the HTTP server bounds apart (`HTTP_MAX_CONNECTIONS`).
 */
export class CompletionWaits {
  private readonly waiting = new Map<string, Set<() => void>>()
  /** Reads admitted to wait and not yet answered: in all, and by account. */
  private admitted = 0
  private readonly admittedBy = new Map<string, number>()
  private lastFollowerWake = 0
  private followerTimer: NodeJS.Timeout | null = null
  private readonly limits: WaitLimits

  constructor(source: AppliedSource, limits: WaitLimits) {
    this.limits = limits
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
   * `ms` is 0 or the first read is final. A read that would wait while `account` already
   * holds `limits.per_account` waiting reads, or this process `limits.per_process`, is
   * answered at once with its first read, marked `refused`.
   * @returns the last value read, and the refusal if there was one.
   */
  async until<T>(
    account: string,
    id: string,
    ms: number,
    read: () => Promise<T>,
    done: (value: T) => boolean,
    cancelled?: AbortSignal
  ): Promise<WaitOutcome<T>> {
    const gone = (): boolean => cancelled?.aborted === true
    let value = await read()
    if (ms <= 0 || done(value) || gone()) return { value, refused: null }
    const held = this.admittedBy.get(account) ?? 0
    if (held >= this.limits.per_account) return { value, refused: 'account_limit' }
    if (this.admitted >= this.limits.per_process) return { value, refused: 'service_limit' }
    this.admitted++
    this.admittedBy.set(account, held + 1)
    try {
      const deadline = Date.now() + ms
      while (!done(value) && Date.now() < deadline && !gone()) {
        await this.next(id, deadline - Date.now(), cancelled)
        value = await read()
      }
      return { value, refused: null }
    } finally {
      this.admitted--
      const left = (this.admittedBy.get(account) ?? 1) - 1
      if (left > 0) this.admittedBy.set(account, left)
      else this.admittedBy.delete(account)
    }
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
