import type * as job from '../../domain/job/decider.ts'
import type { CommandContext } from '../context.ts'
import { workerMeta, type HandleResult } from '../../eventsourcing/command-handler.ts'
import type { JobEvent } from '../../domain/job/events.ts'
import type { LoadedJob } from './seal-result.ts'
import { jobs } from './aggregate.ts'

/**
 * Decides a worker's `command` on the job's stream (`job-<uuid>`) from the state the worker
 * loaded before verifying (re-read only if the stream moved meanwhile), as the verifier,
 * correlated by the job and caused by `causation`. Cost: one append; the stream is a job's
 * handful of events. @throws DomainError from the job decider.
 */
export async function decideOnJob(
  ctx: CommandContext,
  loaded: LoadedJob,
  jobUuid: string,
  command: job.JobCommand,
  causation: string
): Promise<HandleResult<job.JobState, JobEvent>> {
  return await jobs.handle(ctx, jobUuid, command, workerMeta(jobUuid, causation), { known: loaded })
}
