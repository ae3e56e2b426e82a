import type { Projection } from './projection.ts'
import { alreadyApplied } from './projection.ts'
import { ERASED } from '../infra/crypto/sealer.ts'
import type { JobEvent } from '../domain/job/events.ts'

/** Read model `jobs`: one document per verification job, with the engine's result. */
export interface JobDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  email: string
  status: 'queued' | 'deferred' | 'completed' | 'failed'
  verdict: string | null
  reason: string | null
  score: number | null
  checks: string[]
  cost: number
  environment: 'live' | 'test'
  key_uuid: string | null
  created_at: string
  completed_at: string | null
  error: string | null
  result: Record<string, unknown> | null
  /** Greylisting: attempts so far and when the next one is due. */
  attempts: number
  retry_at: string | null
  revision: number
}

export const jobsProjection: Projection = {
  name: 'jobs',
  event_types: ['JobQueued', 'JobDeferred', 'JobCompleted', 'JobFailed'],
  async apply (event, { store, sealer }) {
    const jobs = store.collection<JobDoc>('jobs')
    const e = event as unknown as JobEvent
    const doc = await jobs.get(e.data.job_uuid)
    if (alreadyApplied(doc, event)) return
    switch (e.type) {
      case 'JobQueued':
        await jobs.put({
          _id: e.data.job_uuid,
          uuid: e.data.job_uuid,
          user_uuid: e.data.user_uuid,
          email: (await sealer.unseal(e.data.user_uuid, e.data.email)) ?? ERASED,
          status: 'queued',
          verdict: null,
          reason: null,
          score: null,
          checks: e.data.checks,
          cost: e.data.cost,
          environment: e.data.environment,
          key_uuid: e.data.key_uuid,
          created_at: e.data.queued_at,
          completed_at: null,
          error: null,
          result: null,
          attempts: 0,
          retry_at: null,
          revision: event.revision
        })
        break
      case 'JobDeferred':
        if (!doc) return
        await jobs.put({ ...doc, status: 'deferred', attempts: e.data.attempt, retry_at: e.data.retry_at, revision: event.revision })
        break
      case 'JobCompleted': {
        if (!doc) return
        const result = { ...e.data.result }
        if (typeof result.normalized === 'string') result.normalized = (await sealer.unseal(e.data.user_uuid, result.normalized)) ?? ERASED
        await jobs.put({ ...doc, status: 'completed', verdict: e.data.verdict, reason: e.data.reason, score: e.data.score, completed_at: e.data.completed_at, result, retry_at: null, revision: event.revision })
        break
      }
      case 'JobFailed':
        if (!doc) return
        await jobs.put({ ...doc, status: 'failed', error: e.data.error, completed_at: e.data.failed_at, revision: event.revision })
        break
    }
  }
}
