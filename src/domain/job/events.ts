import type { Environment, Event } from '../shared.ts'
import type { CheckName } from '../checks.ts'

/**
 * `email` is sealed with the owner's data key. `cost` tokens were reserved (0 for test
 * keys) by the wallet reservation `reservation_uuid` that funds the job (null for test
 * keys; absent on events written before it existed), and settling the job settles that one.
 */
export type JobQueued = Event<
  'JobQueued',
  {
    job_uuid: string
    user_uuid: string
    email: string
    checks: CheckName[]
    cost: number
    environment: 'live' | 'test'
    key_uuid: string | null
    reservation_uuid?: string | null
    queued_at: string
    /** The address's blind index in its account (see jobAddressIndex): found by address without unsealing; absent on events written before it was kept. */
    email_index?: string
  }
>

/**
 * The engine's result. Personal data in `result` (`normalized`) is sealed like `email`.
 * `environment` is the job's (absent on events written before it was carried: read as
 * `test` when `result.sandbox`, else `live`).
 */
export type JobCompleted = Event<
  'JobCompleted',
  {
    job_uuid: string
    user_uuid: string
    environment?: Environment
    verdict: 'valid' | 'invalid' | 'risky' | 'unknown'
    reason: string
    score: number
    /** Tokens to capture from the reservation: the cost of the checks that ran; 0 for `unknown`. */
    charge: number
    result: Record<string, unknown>
    completed_at: string
  }
>

/**
 * The receiver greylisted the address (450/451): the job waits and is retried at
 * `retry_at`, until `deadline_at`, after which it completes `unknown`/`greylisted`.
 */
export type JobDeferred = Event<
  'JobDeferred',
  {
    job_uuid: string
    user_uuid: string
    attempt: number
    /** `greylisted`: the receiver asked us to come back (450/451); `egress_blocked`: our own way out to port 25 fails (the egress self-test), the job is held. */
    reason: 'greylisted' | 'egress_blocked'
    retry_at: string
    deadline_at: string
    deferred_at: string
  }
>

/** `environment` is the job's (absent on events written before it was carried: read as `live`). */
export type JobFailed = Event<'JobFailed', { job_uuid: string; user_uuid: string; environment?: Environment; error: string; failed_at: string }>

export type JobEvent = JobQueued | JobDeferred | JobCompleted | JobFailed
