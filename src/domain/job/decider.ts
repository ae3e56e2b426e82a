import { DomainError, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import type { JobCompleted, JobDeferred, JobEvent, JobQueued } from './events.ts'

/** Lifecycle: queued → (deferred ↔ retried)* → completed | failed. */
export type JobStatus = 'queued' | 'deferred' | 'completed' | 'failed'

export type JobState =
  | { status: 'none' }
  | {
      status: JobStatus
      job_uuid: string
      user_uuid: string
      email: string
      checks: JobQueued['data']['checks']
      cost: number
      environment: 'live' | 'test'
      reservation_uuid: string | null
      verdict: JobCompleted['data']['verdict'] | null
      charge: number
      queued_at: string
      attempts: number
      retry_at: string | null
    }

export const initialState = (): JobState => ({ status: 'none' })

export function evolve(state: JobState, event: JobEvent): JobState {
  switch (event.type) {
    case 'JobQueued':
      return {
        status: 'queued',
        job_uuid: event.data.job_uuid,
        user_uuid: event.data.user_uuid,
        email: event.data.email,
        checks: event.data.checks,
        cost: event.data.cost,
        environment: event.data.environment,
        reservation_uuid: event.data.reservation_uuid ?? null,
        verdict: null,
        charge: 0,
        queued_at: event.data.queued_at,
        attempts: 0,
        retry_at: null
      }
    case 'JobDeferred':
      return state.status === 'none' || isTerminal(state)
        ? state
        : { ...state, status: 'deferred', attempts: event.data.attempt, retry_at: event.data.retry_at }
    case 'JobCompleted':
      return state.status === 'none' ? state : { ...state, status: 'completed', verdict: event.data.verdict, charge: Math.min(state.cost, event.data.charge) }
    case 'JobFailed':
      return state.status === 'none' ? state : { ...state, status: 'failed' }
    default:
      return ignoreUnknownEvent(event, state)
  }
}

export const isTerminal = (s: JobState): boolean => s.status === 'completed' || s.status === 'failed'

export type JobCommand =
  | { type: 'QueueJob'; data: JobQueued['data'] }
  | { type: 'CompleteJob'; data: Omit<JobCompleted['data'], 'user_uuid' | 'environment'> }
  | { type: 'FailJob'; data: { job_uuid: string; error: string; failed_at: string } }
  | { type: 'DeferJob'; data: Omit<JobDeferred['data'], 'user_uuid' | 'attempt'> }

/**
 * The job decider. Queueing a job that exists, and completing, deferring or failing a
 * terminal one, are no-ops (the submission and the intake process manager may both queue
 * a job, workers may see a job twice); completing, deferring or failing an unknown job
 * is an error.
 * @throws DomainError not_found `job.not_found` when completing a job that was never queued.
 */
export function decide(command: JobCommand, state: JobState): JobEvent[] {
  switch (command.type) {
    case 'QueueJob':
      if (state.status !== 'none') return []
      return [{ type: 'JobQueued', data: command.data }]
    case 'CompleteJob':
      if (state.status === 'none') throw new DomainError('not_found', 'job.not_found', 'no such job')
      if (isTerminal(state)) return []
      return [{ type: 'JobCompleted', data: { ...command.data, user_uuid: state.user_uuid, environment: state.environment } }]
    case 'DeferJob':
      if (state.status === 'none') throw new DomainError('not_found', 'job.not_found', 'no such job')
      if (isTerminal(state)) return []
      // `attempt` counts greylisting retries (their back-off doubles); a hold while egress is blocked is not one.
      return [
        {
          type: 'JobDeferred',
          data: { ...command.data, user_uuid: state.user_uuid, attempt: command.data.reason === 'greylisted' ? state.attempts + 1 : state.attempts }
        }
      ]
    case 'FailJob':
      if (state.status === 'none') throw new DomainError('not_found', 'job.not_found', 'no such job')
      if (isTerminal(state)) return []
      return [
        {
          type: 'JobFailed',
          data: {
            job_uuid: state.job_uuid,
            user_uuid: state.user_uuid,
            environment: state.environment,
            error: command.data.error,
            failed_at: command.data.failed_at
          }
        }
      ]
    default:
      return noEventsForUnknown(command)
  }
}
