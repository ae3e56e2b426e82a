import type { RecordedEvent } from '../infra/eventstore/port.ts'
import type { Bus, Consumer } from '../infra/bus/port.ts'
import type { JobQueued } from '../domain/job/events.ts'
import * as job from '../domain/job/decider.ts'
import type { VerificationEngine } from '../verifier/engine.ts'
import { simulate } from '../verifier/sandbox.ts'
import { load, type CommandContext } from '../commands/context.ts'
import { completeJob, failJob, settleJob } from '../commands/complete-job.ts'

/**
 * The verifier worker: consumes JobQueued, runs the engine (or the sandbox for test keys),
 * appends JobCompleted and settles the wallet. Idempotent: a job already terminal is only
 * settled (a no-op when that was done), so a redelivered message changes nothing.
 */
export async function startVerifierWorker (ctx: CommandContext, bus: Bus, engine: VerificationEngine, options: { concurrency: number }): Promise<Consumer> {
  return await bus.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: options.concurrency, max_deliveries: 5 }, async (event: RecordedEvent) => {
    const data = event.data as JobQueued['data']
    const { state } = await load(ctx, `job-${data.job_uuid}`, job)
    if (state.status === 'none') return
    if (job.isTerminal(state)) {
      await settleJob(ctx, state.job_uuid, event.id)
      return
    }
    const email = await ctx.sealer.unseal(state.user_uuid, state.email)
    if (email === null) {
      await failJob(ctx, state.job_uuid, 'account erased', event.id)
      return
    }
    const result = state.environment === 'test'
      ? simulate(email, state.checks, ctx.now())
      : await engine.verify(email, state.checks)
    await completeJob(ctx, state, result, event.id)
  })
}
