import * as job from '../../domain/job/decider.ts'
import { faultPoint } from '../../lib/faults.ts'
import type { CommandContext } from '../../commands/context.ts'
import { workerMeta } from '../../eventsourcing/command-handler.ts'
import { wallets } from '../../commands/wallet/aggregate.ts'

/**
 * Settles a terminal job's reservation (the one named in its JobQueued) on its wallet:
 * captures the job's `charge` and releases the rest (all of it for `unknown` or failed
 * jobs). A no-op for test-key jobs, free jobs, jobs still running and reservations
 * already settled (the wallet decider sees that one is no longer open).
 */
export async function settleJob(ctx: CommandContext, state: job.JobState, causationId: string): Promise<void> {
  if (state.status === 'none' || !job.isTerminal(state) || state.cost === 0 || state.environment === 'test') return
  const now = ctx.now().toISOString()
  const ids = { user_uuid: state.user_uuid, job_uuid: state.job_uuid, reservation_uuid: state.reservation_uuid, now }
  const meta = workerMeta(state.job_uuid, causationId)
  if (state.status === 'completed') {
    await wallets.handle(ctx, state.user_uuid, { type: 'CaptureTokens', data: { ...ids, amount: state.charge } }, meta)
  } else {
    await wallets.handle(ctx, state.user_uuid, { type: 'ReleaseTokens', data: { ...ids, reason: 'job_failed' } }, meta)
  }
  faultPoint(ctx.config.fault_point, 'settle.after_capture')
}
