import type { RecordedEvent } from '../ports/event-store.ts'
import type { CollectionSpec } from '../ports/read-store.ts'
import { ERASED } from '../ports/sealer.ts'
import type { JobEvent } from '../domain/job/events.ts'
import type { Environment } from '../domain/shared.ts'
import { collection, documentsProjection, erasing, type DocumentKey, type Folded, type Projection, type Write } from '../eventsourcing/projection.ts'
import { owned, type ReadContext, openText } from './read-context.ts'

/** Read model `jobs`: one document per verification job, with the engine's result; the address stays sealed. */
export interface JobDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  /** Sealed with the owner's data key. */
  email: string
  status: 'queued' | 'deferred' | 'completed' | 'failed'
  verdict: string | null
  reason: string | null
  score: number | null
  checks: string[]
  cost: number
  /** Tokens captured when the job ended (JobCompleted's `charge`; 0 when it failed); null before, and on documents written before it was kept. */
  charged?: number | null
  environment: Environment
  key_uuid: string | null
  created_at: string
  completed_at: string | null
  error: string | null
  /** The engine's result; `normalized` sealed. */
  result: Record<string, unknown> | null
  /** The address's blind index in the account (JobQueued's `email_index`): search by address; null for jobs queued before it was kept. */
  email_index?: string | null
  /** Greylisting: attempts so far and when the next one is due. */
  attempts: number
  retry_at: string | null
  /** While deferred: why (greylisting, or held while egress to port 25 is blocked) and until when at the latest; null otherwise (absent on documents written before it was kept). */
  deferral?: { reason: 'greylisted' | 'egress_blocked'; deadline_at: string } | null
}

/** Jobs counted by the day (UTC) they were created, their environment, status and verdict: the totals of job lists without scanning them. */
export interface JobCountDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  environment: Environment
  day: string
  status: string
  verdict: string
  n: number
}

/**
 * Every list of `GET /api/jobs` is an index range: by creation, and by status, verdict and
 * score each followed by creation (the sort's tiebreak); `_id` (the uuid) for its sort
 * and prefix search; an address's blind index by creation (search by address); `status` alone for the deferred jobs resumed at start. One
 * environment's jobs (a key's list, issue 42 item 10) by creation and by uuid have
 * indexes of their own: a live key's newest jobs are never found by walking past a
 * million sandbox ones; its other sorts walk the account's index or sort the
 * environment's range, whichever reads fewer entries (see `listJobs`).
 */
export const JOBS = collection({
  name: 'jobs',
  projection: 'jobs',
  fields: { user_uuid: 'text', environment: 'text', created_at: 'text', status: 'text', verdict: 'text', score: 'number', email_index: 'text' },
  indexes: [
    ['user_uuid', 'created_at'],
    ['user_uuid', 'status', 'created_at'],
    ['user_uuid', 'verdict', 'created_at'],
    ['user_uuid', 'score', 'created_at'],
    ['user_uuid'],
    ['user_uuid', 'environment', 'created_at'],
    ['user_uuid', 'environment'],
    ['user_uuid', 'email_index', 'created_at'],
    ['status']
  ]
})
/** Per account and day: at most days × environments × statuses × verdicts documents (index user_uuid, day). */
export const JOB_COUNTS = collection({ name: 'job_counts', projection: 'jobs', fields: { user_uuid: 'text', day: 'text' }, indexes: [['user_uuid', 'day']] })
/** Per account, all time: at most environments × statuses × verdicts documents (index user_uuid); the totals of lists without a date range. */
export const JOB_TOTALS = collection({ name: 'job_totals', projection: 'jobs', fields: { user_uuid: 'text' }, indexes: [['user_uuid']] })

/** A job's document as the read store keeps it. */
export type Doc = Folded<JobDoc>

/** The fold of a job's events into its document (sealed fields kept sealed). */
function evolveJob(doc: Doc | null, event: RecordedEvent): JobDoc | null {
  const e = event as unknown as JobEvent
  if (e.type === 'JobQueued') {
    const d = e.data
    return {
      ...owned(d.job_uuid, d.user_uuid),
      email: d.email,
      status: 'queued',
      verdict: null,
      reason: null,
      score: null,
      checks: d.checks,
      cost: d.cost,
      charged: null,
      environment: d.environment,
      key_uuid: d.key_uuid,
      created_at: d.queued_at,
      completed_at: null,
      error: null,
      result: null,
      attempts: 0,
      retry_at: null,
      deferral: null,
      email_index: d.email_index ?? null
    }
  }
  if (doc === null) return null
  switch (e.type) {
    case 'JobDeferred':
      return {
        ...doc,
        status: 'deferred',
        attempts: e.data.attempt,
        retry_at: e.data.retry_at,
        deferral: { reason: e.data.reason, deadline_at: e.data.deadline_at }
      }
    case 'JobCompleted':
      return {
        ...doc,
        status: 'completed',
        verdict: e.data.verdict,
        reason: e.data.reason,
        score: e.data.score,
        completed_at: e.data.completed_at,
        result: { ...e.data.result },
        charged: e.data.charge,
        retry_at: null,
        deferral: null
      }
    case 'JobFailed':
      return { ...doc, status: 'failed', error: e.data.error, completed_at: e.data.failed_at, charged: 0, retry_at: null, deferral: null }
  }
}

/** A count document without its count. */
type CountKey = Pick<JobCountDoc, '_id' | 'user_uuid' | 'environment' | 'day' | 'status' | 'verdict'>

/** The count documents a job in this state adds one to: its day's and its account's totals in its environment (ids and fields). */
function countDocs(j: Pick<JobDoc, 'user_uuid' | 'environment' | 'created_at' | 'status' | 'verdict'>): { day: CountKey; all: CountKey } {
  const day = j.created_at.slice(0, 10)
  const verdict = j.verdict ?? 'none'
  const fields = { user_uuid: j.user_uuid, environment: j.environment, status: j.status, verdict }
  return {
    day: { _id: `${j.user_uuid}|${j.environment}|${day}|${j.status}|${verdict}`, day, ...fields },
    all: { _id: `${j.user_uuid}|${j.environment}|${j.status}|${verdict}`, day: '', ...fields }
  }
}

/** The job's document before the event and after it (null after: nothing to write, a replay or an event before its job). */
function transition(doc: Doc | null, event: RecordedEvent): { before: Doc | null; after: JobDoc | null } {
  if (doc !== null && doc.revision >= event.revision) return { before: doc, after: null }
  return { before: doc, after: evolveJob(doc, event) }
}

/** Whether a job moving from `before` to `after` moves between counts. */
const recounted = (before: JobDoc | null, after: JobDoc): boolean => before === null || countDocs(before).day._id !== countDocs(after).day._id

/** The write that adds `delta` to a count document (`stored`: as it is, or null), deleting it at zero. */
function recount(spec: CollectionSpec, key: CountKey, stored: unknown, delta: number): Write {
  const n = ((stored as JobCountDoc | null)?.n ?? 0) + delta
  return n > 0 ? { put: spec, doc: { ...key, n } } : { delete: spec, id: key._id }
}

/**
 * The jobs (a fold per job) and their counts by day, status and verdict, kept in the same
 * batch: a fold over the job's document and, when its status or verdict moves, the four
 * count documents it leaves and enters (read after the job, whose state names them). The
 * job's `revision` guards the counts too: an event delivered twice finds its job already
 * past it and writes nothing. An erased account's jobs and counts are deleted (later
 * events find no job and make none). Cost: at most five documents an event.
 */
export const jobsProjection: Projection = documentsProjection({
  // 4: counts per environment, and the environment's indexes (issue 42 item 10); 5: the address's blind index (search by address).
  version: 5,
  collections: [JOBS, JOB_COUNTS, JOB_TOTALS],
  event_types: ['JobQueued', 'JobDeferred', 'JobCompleted', 'JobFailed', 'UserDeleted'],
  reads: event => (event.type === 'UserDeleted' ? [] : [[JOBS, event.data.job_uuid as string]]),
  readsAfter: (event, [doc]) => {
    if (event.type === 'UserDeleted') return []
    const { before, after } = transition(doc as Doc | null, event)
    if (after === null || !recounted(before, after)) return []
    const keys = (j: JobDoc): DocumentKey[] => {
      const { day, all } = countDocs(j)
      return [
        [JOB_COUNTS, day._id],
        [JOB_TOTALS, all._id]
      ]
    }
    return [...(before ? keys(before) : []), ...keys(after)]
  },
  evolve: (docs, event) => {
    if (event.type === 'UserDeleted') return erasing([JOBS, JOB_COUNTS, JOB_TOTALS], event.data.user_uuid as string)
    const { before, after } = transition(docs[0] as Doc | null, event)
    if (after === null) return []
    const writes: Write[] = [{ put: JOBS, doc: { ...after, revision: event.revision } }]
    if (!recounted(before, after)) return writes
    const counts = docs.slice(1)
    if (before) {
      const left = countDocs(before)
      writes.push(recount(JOB_COUNTS, left.day, counts[0], -1), recount(JOB_TOTALS, left.all, counts[1], -1))
    }
    const entered = countDocs(after)
    const at = before ? 2 : 0
    writes.push(recount(JOB_COUNTS, entered.day, counts[at], +1), recount(JOB_TOTALS, entered.all, counts[at + 1], +1))
    return writes
  }
})

/** A sealed field of a result, unsealed (see `openText`); anything but text as is. */
async function open(rc: ReadContext, owner: string, value: unknown): Promise<unknown> {
  return typeof value === 'string' ? await openText(rc, owner, value) : value
}

/** A job with its address and the address-derived fields of its result unsealed (`[erased]` once its key is destroyed). */
export async function unsealed(rc: ReadContext, j: JobDoc): Promise<JobDoc> {
  const email = (await rc.sealer.unseal(j.user_uuid, j.email)) ?? ERASED
  if (!j.result) return { ...j, email }
  const r = j.result as Record<string, any>
  const owner = j.user_uuid
  return {
    ...j,
    email,
    result: {
      ...r,
      normalized: await open(rc, owner, r.normalized),
      did_you_mean: await open(rc, owner, r.did_you_mean ?? null),
      mx: r.mx ? { ...r.mx, host: await open(rc, owner, r.mx.host) } : (r.mx ?? null),
      smtp: r.smtp ? { ...r.smtp, message: await open(rc, owner, r.smtp.message) } : (r.smtp ?? null),
      checks: Array.isArray(r.checks)
        ? await Promise.all(r.checks.map(async (c: Record<string, unknown>) => ({ ...c, detail: await open(rc, owner, c.detail) })))
        : r.checks
    }
  }
}

/**
 * A job of `owner` in `environment` (null: either), unsealed; null for an unknown job,
 * another account's, or another environment's (issue 42 item 10). Cost: one read by id.
 */
export async function getJob(rc: ReadContext, owner: string, environment: Environment | null, uuid: string): Promise<JobDoc | null> {
  const doc = await rc.reads.collection<Doc>(JOBS).get(uuid)
  return doc && doc.user_uuid === owner && (environment === null || doc.environment === environment) ? await unsealed(rc, doc) : null
}

/** Deferred jobs (greylisting), resumed at start with the in-process bus (index status; bounded by what waits). */
export async function deferredJobs(rc: Pick<ReadContext, 'reads'>): Promise<Array<Pick<JobDoc, 'uuid' | 'retry_at'>>> {
  return (await rc.reads.collection<Doc>(JOBS).find({ where: { status: 'deferred' } })).map(j => ({ uuid: j.uuid, retry_at: j.retry_at }))
}
