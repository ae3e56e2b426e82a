import type { RecordedEvent } from '../ports/event-store.ts'
import { RetryLater, type Bus, type Consumer } from '../ports/bus.ts'
import type { ReadStore } from '../ports/read-store.ts'
import type { JobDeferred, JobQueued } from '../domain/job/events.ts'
import * as job from '../domain/job/decider.ts'
import type { VerificationEngine } from '../verifier/engine.ts'
import { simulate } from '../verifier/sandbox.ts'
import type { CommandContext } from '../commands/context.ts'
import { completeJob } from '../flows/job-settlement/complete-job.ts'
import { failJob } from '../flows/job-settlement/fail-job.ts'
import { settleJob } from '../flows/job-settlement/settle-job.ts'
import { deferJob } from '../commands/job/defer-job.ts'
import { deferredJobs } from '../projections/jobs.ts'
import { VerifyBatcher } from './verify-batcher.ts'
import { greylistRetryAt } from '../domain/job/greylisting.ts'
import type { Metrics } from '../ports/metrics.ts'
import { jobs } from '../commands/job/aggregate.ts'

/** Event types the verifier consumes (its NATS stream and durable consumer). */
export const VERIFIER_EVENTS = ['JobQueued', 'JobDeferred'] as const

export interface VerifierWorkerOptions {
  concurrency: number
  /** Greylisting: first retry delay, doubled per attempt, and the deadline after queueing (ms). */
  greylist: { retry_ms: number; deadline_ms: number }
  /** Read store to find deferred jobs at start (timers do not survive a restart). */
  reads?: ReadStore
  /** Counts jobs by verdict and reason, and deferrals. */
  metrics?: Metrics
  /**
   * The egress self-test: while it finds egress `blocked`, a new live job that asks SMTP
   * is held (`deferred`, reason `egress_blocked`) rather than burned as `unknown`, until
   * `hold_ms` after it was queued; it is tried again every `recheck_ms` and runs as soon as
   * egress answers again (or, past the hold, anyway).
   */
  egress?: { blocked: () => boolean; hold_ms: number; recheck_ms: number }
}

export interface VerifierWorker extends Consumer {
  /** Jobs waiting for a greylisting retry in this process. */
  readonly scheduled: number
}

/**
 * The verifier worker: consumes JobQueued, verifies (the engine, through a micro-batcher so
 * that jobs arriving together share sessions; the sandbox for test keys), appends
 * JobCompleted and settles the wallet. A greylisted address (450/451) defers the job
 * (JobDeferred, status `deferred`) and it is retried with back-off — first after
 * `retry_ms`, then doubling — until `deadline_ms` after it was queued, when it completes
 * `unknown`/`greylisted` (not charged). A JobDeferred event comes back through the bus when
 * its retry is due, to whichever worker instance is there; with a read store (all-in-one),
 * deferred jobs are also picked up at start.
 * Idempotent: a job already terminal is only settled, so redelivery changes nothing.
 */
export async function startVerifierWorker(ctx: CommandContext, bus: Bus, engine: VerificationEngine, options: VerifierWorkerOptions): Promise<VerifierWorker> {
  const batcher = new VerifyBatcher(engine, { greylist: 'defer' })
  const timers = new Map<string, NodeJS.Timeout>()
  let stopped = false

  const schedule = (jobUuid: string, at: string, causation: string): void => {
    if (stopped || timers.has(jobUuid)) return
    const timer = setTimeout(
      () => {
        timers.delete(jobUuid)
        run(jobUuid, causation)
          .then(again => {
            if (again !== null) schedule(jobUuid, new Date(ctx.now().getTime() + again).toISOString(), causation)
          })
          .catch(err => {
            console.error(`verifier: retry of job ${jobUuid} failed`, err)
          })
      },
      Math.max(0, Date.parse(at) - ctx.now().getTime())
    )
    timers.set(jobUuid, timer)
  }

  /**
   * Runs a job (verifies, defers or completes it). @returns ms after which to try again
   * when it is held for egress and already deferred (no new event: the retry rides on the
   * bus or a timer), else null.
   */
  const inFlight = new Map<string, Promise<number | null>>()
  // One run of a job at a time in this process: a held delivery of its JobDeferred and the
  // timer of a deferred job found at start may come due together after a restart (the
  // second shares the first's run rather than ask the mailbox again).
  const run = async (jobUuid: string, causation: string): Promise<number | null> => {
    const running = inFlight.get(jobUuid)
    if (running) return await running
    const p = runOnce(jobUuid, causation).finally(() => inFlight.delete(jobUuid))
    inFlight.set(jobUuid, p)
    return await p
  }

  const runOnce = async (jobUuid: string, causation: string): Promise<number | null> => {
    const loaded = await jobs.load(ctx, jobUuid)
    const state = loaded.state
    if (state.status === 'none') return null
    if (job.isTerminal(state)) {
      await settleJob(ctx, state, causation)
      return null
    }
    if (state.status === 'deferred' && state.retry_at && Date.parse(state.retry_at) > ctx.now().getTime()) {
      schedule(jobUuid, state.retry_at, causation)
      return null
    }
    const egress = options.egress
    if (egress && state.environment === 'live' && state.checks.includes('smtp') && egress.blocked()) {
      const now = ctx.now().getTime()
      const deadline = Date.parse(state.queued_at) + egress.hold_ms
      if (now < deadline) {
        // Held once as an event (the job shows `deferred`); while it stays held, no more events.
        if (state.status === 'deferred') return Math.min(egress.recheck_ms, deadline - now)
        const retryAt = new Date(Math.min(deadline, now + egress.recheck_ms)).toISOString()
        if (await deferJob(ctx, loaded, { reason: 'egress_blocked', retry_at: retryAt, deadline_at: new Date(deadline).toISOString() }, causation))
          options.metrics?.deferrals.inc({ reason: 'egress_blocked' })
        return null
      }
    }
    const email = await ctx.sealer.unseal(state.user_uuid, state.email)
    if (email === null) {
      if (await failJob(ctx, loaded, 'account erased', causation))
        options.metrics?.jobs.inc({ verdict: 'none', reason: 'failed', environment: state.environment })
      return null
    }
    const result = state.environment === 'test' ? simulate(email, state.checks, ctx.now()) : await batcher.verify(email, state.checks)
    if (result.reason === 'greylisted' && !result.sandbox) {
      const now = ctx.now().getTime()
      const deadline = Date.parse(state.queued_at) + options.greylist.deadline_ms
      const retryAt = greylistRetryAt(Date.parse(state.queued_at), now, options.greylist.retry_ms, state.attempts, deadline)
      if (retryAt !== null) {
        if (await deferJob(ctx, loaded, { retry_at: new Date(retryAt).toISOString(), deadline_at: new Date(deadline).toISOString() }, causation))
          options.metrics?.deferrals.inc({ reason: 'greylisted' })
        return null
      }
    }
    if (await completeJob(ctx, loaded, result, causation))
      options.metrics?.jobs.inc({ verdict: result.verdict, reason: result.reason, environment: state.environment })
    return null
  }

  const consumer = await bus.consume(
    { name: 'verifier', event_types: VERIFIER_EVENTS, concurrency: options.concurrency, max_deliveries: 8 },
    async (event: RecordedEvent) => {
      if (event.type === 'JobDeferred') {
        // The retry rides on the bus: the message comes back when it is due (NATS: a nak
        // with that delay; in-process: a held delivery, kept over restarts; deferred jobs are
        // also found in the read store at start, for those held before held deliveries were kept).
        const d = event.data as JobDeferred['data']
        const wait = Date.parse(d.retry_at) - ctx.now().getTime()
        if (wait > 0) throw new RetryLater(wait)
        const again = await run(d.job_uuid, event.id)
        if (again !== null) throw new RetryLater(again)
        return
      }
      const again = await run((event.data as JobQueued['data']).job_uuid, event.id)
      if (again !== null) throw new RetryLater(again)
    }
  )

  if (options.reads) {
    for (const j of await deferredJobs({ reads: options.reads })) schedule(j.uuid, j.retry_at ?? ctx.now().toISOString(), `recovered:${j.uuid}`)
  }

  return {
    get problem() {
      return consumer.problem ?? null
    },
    get scheduled() {
      return timers.size
    },
    stop: async () => {
      stopped = true
      for (const t of timers.values()) clearTimeout(t)
      timers.clear()
      await consumer.stop()
    }
  }
}
