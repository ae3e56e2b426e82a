import type { Condition, Query, Where } from '../ports/read-store.ts'
import type { Environment } from '../domain/shared.ts'
import type { ReadContext } from './read-context.ts'
import { JOBS, JOB_COUNTS, JOB_TOTALS, unsealed, type Doc, type JobCountDoc, type JobDoc } from './jobs.ts'

// The list of `GET /api/jobs` over the jobs projection (its collections and indexes in jobs.ts).

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
