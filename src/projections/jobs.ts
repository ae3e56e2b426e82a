import type { RecordedEvent } from '../ports/event-store.ts'
import type { CollectionSpec, Condition, Query, Where } from '../ports/read-store.ts'
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
interface JobCountDoc {
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

type Doc = Folded<JobDoc>

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
async function unsealed(rc: ReadContext, j: JobDoc): Promise<JobDoc> {
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

export const JOB_SORTS = ['created_at', 'score', 'status', 'verdict', 'uuid'] as const
export type JobSort = (typeof JOB_SORTS)[number]

/** The filters of `GET /api/jobs` (interface "Verification jobs"): all optional, combined with AND; lists OR-ed. */
export interface JobFilter {
  /** One environment's jobs (a key's own, or a session's choice); both when absent. */
  environment?: Environment
  status?: readonly string[]
  verdict?: readonly string[]
  /** Inclusive bounds on `created_at` (RFC 3339, UTC). */
  from?: string
  to?: string
  /** A prefix of the uuid (lower-cased). */
  search?: string
  /** An address's blind index (jobAddressIndex): that address's jobs. */
  email_index?: string
}

function whereOf(owner: string, f: JobFilter, created?: { gte?: string; lte?: string }): Where {
  const where: Record<string, Condition> = { user_uuid: owner }
  if (f.environment) where.environment = f.environment
  if (f.status) where.status = { in: f.status }
  if (f.verdict) where.verdict = { in: f.verdict }
  const range = created ?? { ...(f.from && { gte: f.from }), ...(f.to && { lte: f.to }) }
  if (range.gte !== undefined || range.lte !== undefined) where.created_at = range
  if (f.search) where._id = { prefix: f.search.toLowerCase() }
  if (f.email_index) where.email_index = f.email_index
  return where
}

const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10)

/**
 * How many of `owner`'s jobs match `f`, without scanning them: without a date range from
 * the account's totals (at most environments × statuses × verdicts documents); with one,
 * whole days from the daily counts (at most days × environments × statuses × verdicts
 * documents), the part-days at the ends of a
 * `from`/`to` range from the jobs index (at most two days of jobs). A uuid prefix search
 * counts the jobs it matches (an index range).
 */
async function countJobs(rc: Pick<ReadContext, 'reads'>, owner: string, f: JobFilter): Promise<number> {
  const jobs = rc.reads.collection<Doc>(JOBS)
  if (f.search || f.email_index) return await jobs.count(whereOf(owner, f))
  const fromDay = f.from?.slice(0, 10)
  const toDay = f.to?.slice(0, 10)
  if (fromDay !== undefined && toDay !== undefined && fromDay > toDay) return 0
  // Whole days strictly inside the range come from the counts; the days of `from` and `to`, from the jobs.
  const inner = { ...(fromDay !== undefined && { gte: nextDay(fromDay) }), ...(toDay !== undefined && { lte: toDay }) }
  const ranged = inner.gte !== undefined || inner.lte !== undefined
  const counts = ranged
    ? await rc.reads.collection<JobCountDoc>(JOB_COUNTS).find({ where: { user_uuid: owner, day: inner } })
    : await rc.reads.collection<JobCountDoc>(JOB_TOTALS).find({ where: { user_uuid: owner } })
  let total = 0
  for (const c of counts) {
    if (f.environment && c.environment !== f.environment) continue
    if (toDay !== undefined && c.day === toDay) continue
    if (f.status && !f.status.includes(c.status)) continue
    if (f.verdict && !f.verdict.includes(c.verdict)) continue
    total += c.n
  }
  if (fromDay !== undefined) total += await jobs.count(whereOf(owner, f, { gte: f.from, lte: toDay === fromDay ? f.to : `${fromDay}T23:59:59.999Z` }))
  if (toDay !== undefined && toDay !== fromDay) total += await jobs.count(whereOf(owner, f, { gte: `${toDay}T00:00:00.000Z`, lte: f.to }))
  return total
}

/** The index that yields each sort's order for one account (JOBS.indexes). */
const SORT_INDEX: Readonly<Record<JobSort, readonly string[]>> = {
  created_at: ['user_uuid', 'created_at'],
  score: ['user_uuid', 'score', 'created_at'],
  status: ['user_uuid', 'status', 'created_at'],
  verdict: ['user_uuid', 'verdict', 'created_at'],
  uuid: ['user_uuid']
}

/** The sorts whose order one environment's index yields for one account (JOBS.indexes). */
const ENVIRONMENT_SORT_INDEX: Readonly<Partial<Record<JobSort, readonly string[]>>> = {
  created_at: ['user_uuid', 'environment', 'created_at'],
  uuid: ['user_uuid', 'environment']
}

/**
 * A page of `owner`'s jobs matching `f` (interface `GET /api/jobs`), sorted on `sort`
 * then by creation (and the uuid), unsealed, with the total. Each sort and filter is an
 * index range (see JOBS); the total comes from `countJobs`. With filters, the page is read
 * one of two ways, whichever touches fewer index entries: walking the sort's own index and
 * skipping what does not match (about (offset + limit) × all / matching entries, `all`
 * counted in the index walked: the environment's own where it has one), or taking every
 * match through the filter's index and sorting them (matching entries) — the planner alone
 * would sort a wide date range of a million jobs. The environment (issue 42 item 10) is a
 * filter like the others.
 */
export async function listJobs(
  rc: ReadContext,
  owner: string,
  f: JobFilter,
  sort: JobSort,
  order: 1 | -1,
  page: { limit: number; offset: number }
): Promise<{ items: JobDoc[]; total: number }> {
  const keys: Query['sort'] =
    sort === 'uuid'
      ? [['_id', order]]
      : sort === 'created_at'
        ? [['created_at', order]]
        : [
            [sort, order],
            ['created_at', order]
          ]
  const filtered =
    f.environment !== undefined ||
    f.status !== undefined ||
    f.verdict !== undefined ||
    f.from !== undefined ||
    f.to !== undefined ||
    (f.search !== undefined && f.search !== '') ||
    f.email_index !== undefined
  const total = await countJobs(rc, owner, f)
  if (total === 0 || page.offset >= total) return { items: [], total }
  let useIndex: readonly string[] | undefined
  if (filtered) {
    const own = f.environment === undefined ? undefined : ENVIRONMENT_SORT_INDEX[sort]
    const walked = own ?? SORT_INDEX[sort]
    const all = await countJobs(rc, owner, own ? { environment: f.environment } : {})
    if (((page.offset + page.limit) * all) / total < total) useIndex = walked
    // Through the filter's index (a uuid prefix: the primary key, the planner's choice).
    else if (f.email_index !== undefined) useIndex = ['user_uuid', 'email_index', 'created_at']
    else if (f.status !== undefined) useIndex = SORT_INDEX.status
    else if (f.verdict !== undefined) useIndex = SORT_INDEX.verdict
    else if (f.search === undefined || f.search === '') useIndex = f.environment === undefined ? SORT_INDEX.created_at : ENVIRONMENT_SORT_INDEX.created_at
  }
  const docs = await rc.reads.collection<Doc>(JOBS).find({ where: whereOf(owner, f), sort: keys, ...page, ...(useIndex && { use_index: useIndex }) })
  return { items: await Promise.all(docs.map(async d => await unsealed(rc, d))), total }
}
