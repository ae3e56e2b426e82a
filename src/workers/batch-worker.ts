import type { RecordedEvent } from '../ports/event-store.ts'
import { RetryLater, type Bus, type Consumer } from '../ports/bus.ts'
import type { BatchChunkProcessed, BatchItemResult, BatchItemsAdded, BatchItemsDeferred } from '../domain/batch/events.ts'
import * as batch from '../domain/batch/decider.ts'
import type { VerificationEngine } from '../verifier/engine.ts'
import type { VerificationResult } from '../verifier/result.ts'
import { simulate } from '../verifier/sandbox.ts'
import type { CommandContext } from '../commands/context.ts'
import { holdBatch } from '../commands/batch/hold-batch.ts'
import { deferBatchItems } from '../commands/batch/defer-batch-items.ts'
import { recordBatchResults } from '../commands/batch/record-batch-results.ts'
import { settleBatchChunk } from '../flows/batch-settlement/settle-batch-chunk.ts'
import { chargeFor } from '../domain/job/charge.ts'
import { greylistRetryAt } from '../domain/job/greylisting.ts'
import { closeIdleIntake } from '../commands/batch/close-idle-intake.ts'
import { idleBatches } from '../projections/batches.ts'
import type { Metrics } from '../ports/metrics.ts'
import { batches } from '../commands/batch/aggregate.ts'
import { turnIfDue } from '../lib/turns.ts'

/** The sandbox's results of a test batch's part, in order (the event loop gets its turns: a part is up to 2,000). */
async function simulateAll(items: ReadonlyArray<{ address: string | null }>, checks: Parameters<typeof simulate>[1], now: Date): Promise<VerificationResult[]> {
  const out: VerificationResult[] = []
  for (const item of items) {
    out.push(simulate(item.address!, checks, now))
    await turnIfDue()
  }
  return out
}

/** How long results the engine decided wait to be recorded together (ms): progress lags the answers by about this much. */
const RECORD_EVERY_MS = 250

/** Event types the batch worker consumes (its NATS stream and durable consumer). */
export const BATCH_WORKER_EVENTS = ['BatchItemsAdded', 'BatchItemsDeferred', 'BatchChunkProcessed'] as const

export interface BatchWorkerOptions {
  /** Parts verified at once by this process. */
  concurrency: number
  /** Greylisting: first retry delay, doubled per attempt, and the deadline after the chunk came (ms). */
  greylist: { retry_ms: number; deadline_ms: number }
  /** Intake closes after this long without a chunk (s; `BATCH_INTAKE_IDLE_S`). */
  intake_idle_s: number
  /** Whether this process sweeps idle intakes (it has the read models). */
  sweep: boolean
  metrics?: Metrics
  log?: (msg: string, err?: unknown) => void
  /**
   * The egress self-test (as the verifier worker's): while egress is blocked, a live part
   * that asks SMTP waits (its message comes back every `recheck_ms`, no event) up to
   * `hold_ms` after its chunk came, rather than ending `unknown`.
   */
  egress?: { blocked: () => boolean; hold_ms: number; recheck_ms: number }
}

/**
 * The batch worker: verifies each part of a chunk as it
 * arrives (BatchItemsAdded) with one engine call, whose SMTP sessions per MX are shared
 * with the parts of concurrent batches and with single jobs (the prober's lanes); records the results of a
 * part in one BatchResultsRecorded, greylisted items in one BatchItemsDeferred that comes
 * back through the bus when due (retries double until the deadline, then `unknown`/
 * `greylisted`, not charged). A chunk whose items all have results (BatchChunkProcessed)
 * has its reservation captured for the firm verdicts and the rest released, once (the
 * wallet decider settles a reservation once). Test-key batches are simulated (sandbox).
 * Idempotent: items with a result are skipped, results recorded twice change nothing.
 * With `sweep`, intake idle for `intake_idle_s` is closed every min(60 s, idle / 4).
 * With `egress`, live parts wait while egress is blocked (see the option).
 */
export async function startBatchWorker(ctx: CommandContext, bus: Bus, engine: VerificationEngine, options: BatchWorkerOptions): Promise<Consumer> {
  /** Verifies `items` of a chunk and records their results; greylisted ones are deferred (attempt `attempt`). */
  const verify = async (
    batchUuid: string,
    chunkUuid: string,
    items: ReadonlyArray<{ i: number; email: string }>,
    attempt: number,
    deadline: number,
    causation: string,
    since: number
  ): Promise<void> => {
    const loaded = await batches.load(ctx, batchUuid)
    const s = loaded.state
    if (s.status === 'none') return
    const chunk = s.open.get(chunkUuid)
    if (!chunk) return
    const todo = items.filter(item => batch.awaitsResult(chunk, item.i))
    if (todo.length === 0) return
    const egress = options.egress
    if (egress && s.environment === 'live' && s.checks.includes('smtp') && egress.blocked()) {
      // Held while egress is blocked (`since`: when the chunk came), as single jobs are.
      const left = since + egress.hold_ms - ctx.now().getTime()
      if (left > 0) {
        // The batch says so in its fields (`held`), once per hold.
        if ((s.held_until ?? null) === null && (await holdBatch(ctx, batchUuid, new Date(since + egress.hold_ms).toISOString(), causation)))
          options.metrics?.deferrals.inc({ reason: 'egress_blocked' })
        throw new RetryLater(Math.min(egress.recheck_ms, left))
      }
    }
    const opened: Array<{ i: number; email: string; address: string | null }> = []
    for (const item of todo) {
      opened.push({ ...item, address: await ctx.sealer.unseal(s.user_uuid, item.email) })
      await turnIfDue()
    }
    const deferred: Array<{ i: number; email: string }> = []
    // The part in one call: its addresses share DNS lookups, and the engine's sessions per MX
    // are shared with every other part and job probing the same MX meanwhile.
    const live = opened.filter(item => item.address !== null)
    /** An item's result as the batch records it (its address-bearing fields sealed for the account). */
    const resultOf = async (item: { i: number }, r: VerificationResult): Promise<BatchItemResult> => {
      options.metrics?.jobs.inc({ verdict: r.verdict, reason: r.reason, environment: s.environment })
      return {
        i: item.i,
        verdict: r.verdict,
        reason: r.reason,
        score: r.score,
        flags: r.flags,
        did_you_mean: r.did_you_mean === null ? null : await ctx.sealer.seal(s.user_uuid, r.did_you_mean),
        charge: s.cost_per_item === 0 ? 0 : Math.min(s.cost_per_item, chargeFor(r, s.checks)),
        mx_host: r.mx === null ? null : await ctx.sealer.seal(s.user_uuid, r.mx.host),
        smtp_provider: r.mx?.provider ?? null,
        checked_at: r.checked_at
      }
    }
    // Results are recorded as the engine decides them (a part's fast MX need not wait for its
    // slowest): in appends of whatever came in the last RECORD_EVERY_MS, one at a time, so a
    // part of 2,000 costs a few dozen appends, not 2,000. Greylisted ones wait for the end of
    // the call (they are deferred together). A redelivered part skips the items recorded.
    const recorded = new Set<number>()
    let early: Array<{ k: number; r: VerificationResult }> = []
    let flushing: Promise<void> = Promise.resolve()
    /** An append that failed: nothing more is recorded early, and the part fails (and is redelivered) once the call ends. */
    let failed: { error: unknown } | null = null
    let timer: NodeJS.Timeout | null = null
    const flush = async (): Promise<void> => {
      timer = null
      const now = early
      early = []
      if (now.length === 0 || failed) return
      const out: BatchItemResult[] = []
      for (const { k, r } of now) {
        out.push(await resultOf(live[k], r))
        await turnIfDue()
      }
      out.sort((a, b) => a.i - b.i)
      await recordBatchResults(ctx, batchUuid, chunkUuid, out, causation)
      for (const { k } of now) recorded.add(k)
    }
    const onResult = (k: number, r: VerificationResult): void => {
      if (r.reason === 'greylisted' && !r.sandbox) return
      early.push({ k, r })
      timer ??= setTimeout(() => {
        flushing = flushing.then(flush).catch((error: unknown) => {
          failed ??= { error }
        })
      }, RECORD_EVERY_MS)
    }
    // The latest time a greylisted recipient of this part was asked (the windows run from there).
    let lastGreylisted = 0
    let verified: VerificationResult[]
    const calledAt = Date.now()
    try {
      verified =
        s.environment === 'test'
          ? await simulateAll(live, s.checks, ctx.now())
          : await engine.verifyMany(
              live.map(item => ({ email: item.address!, checks: s.checks })),
              {
                greylist: 'defer',
                on_greylisted: (_i, at) => {
                  lastGreylisted = Math.max(lastGreylisted, at)
                },
                on_result: onResult,
                // A retry asks one recipient per MX first (the rest once it passes), and nothing
                // after the deadline: the part ends at it, not a round later.
                ...(attempt > 1 && { stop_at: deadline, greylist_retry: true })
              }
            )
    } finally {
      if (timer !== null) clearTimeout(timer)
      timer = null
      early = []
      // What was recorded early stays recorded (a failed append is redelivered with the part).
      await flushing
    }
    // Set by the flushes (closures the compiler does not follow).
    const failure = failed as { error: unknown } | null
    if (failure) throw failure.error
    const results: BatchItemResult[] = []
    // The account was erased meanwhile: nothing to verify, nothing charged.
    for (const item of opened)
      if (item.address === null) results.push({ i: item.i, verdict: 'unknown', reason: 'unknown', score: 0, flags: [], did_you_mean: null, charge: 0 })
    // Asked again once the greylisting window since the part's last greylisted answer has
    // passed: as the engine alone would, never too early (which would cost a round), and not
    // later for the rest of the part's call.
    // The last retry starts a call's length before the deadline (this call's, an upper bound
    // of a retry of some of its items), so that it is over by the deadline.
    const answeredAt = lastGreylisted > 0 ? lastGreylisted : ctx.now().getTime()
    const retryAt = greylistRetryAt(since, answeredAt, options.greylist.retry_ms, attempt - 1, deadline - (Date.now() - calledAt))
    for (const [k, item] of live.entries()) {
      if (recorded.has(k)) continue
      const r: VerificationResult = verified[k]
      if (r.reason === 'greylisted' && !r.sandbox && retryAt !== null) {
        deferred.push({ i: item.i, email: item.email })
        continue
      }
      results.push(await resultOf(item, r))
      await turnIfDue()
    }
    if (results.length > 0) {
      results.sort((a, b) => a.i - b.i)
      await recordBatchResults(ctx, batchUuid, chunkUuid, results, causation)
    }
    if (deferred.length > 0 && retryAt !== null) {
      deferred.sort((a, b) => a.i - b.i)
      await deferBatchItems(
        ctx,
        batchUuid,
        chunkUuid,
        deferred,
        { attempt, retry_at: new Date(retryAt).toISOString(), deadline_at: new Date(deadline).toISOString() },
        causation
      )
      options.metrics?.deferrals.inc({ reason: 'greylisted' })
    }
  }

  const consumer = await bus.consume(
    { name: 'batches', event_types: BATCH_WORKER_EVENTS, concurrency: options.concurrency, max_deliveries: 8 },
    async (event: RecordedEvent) => {
      if (event.type === 'BatchItemsAdded') {
        const d = event.data as BatchItemsAdded['data']
        const items = d.items.flatMap((item, k) => (item.invalid ? [] : [{ i: d.first + k, email: item.email }]))
        await verify(d.batch_uuid, d.chunk_uuid, items, 1, Date.parse(d.added_at) + options.greylist.deadline_ms, event.id, Date.parse(d.added_at))
        return
      }
      if (event.type === 'BatchItemsDeferred') {
        const d = event.data as BatchItemsDeferred['data']
        // Counted by the process's clock: the part's retry_at counts from the engine's own answer times (answered_at).
        const wait = Date.parse(d.retry_at) - Date.now()
        if (wait > 0) throw new RetryLater(wait)
        await verify(
          d.batch_uuid,
          d.chunk_uuid,
          d.items,
          d.attempt + 1,
          Date.parse(d.deadline_at),
          event.id,
          Date.parse(d.deadline_at) - options.greylist.deadline_ms
        )
        return
      }
      if (event.type === 'BatchChunkProcessed') {
        await settleBatchChunk(ctx, event.data as BatchChunkProcessed['data'], event.id)
      }
    }
  )

  let timer: NodeJS.Timeout | null = null
  if (options.sweep) {
    const idleMs = options.intake_idle_s * 1000
    const sweep = async (): Promise<void> => {
      const before = new Date(ctx.now().getTime() - idleMs).toISOString()
      for (const b of await idleBatches(ctx, before)) await closeIdleIntake(ctx, b.uuid, before)
    }
    timer = setInterval(
      () => {
        sweep().catch(err => options.log?.('batch intake sweep failed', err))
      },
      Math.max(50, Math.min(60_000, idleMs / 4))
    )
  }

  return {
    get problem() {
      return consumer.problem ?? null
    },
    stop: async () => {
      if (timer) clearInterval(timer)
      await consumer.stop()
    }
  }
}
