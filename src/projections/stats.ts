import type { RecordedEvent } from '../ports/event-store.ts'
import type { JobCompleted, JobFailed, JobQueued } from '../domain/job/events.ts'
import type { TokensCaptured } from '../domain/wallet/events.ts'
import type { BatchItemsAdded, BatchResultsRecorded } from '../domain/batch/events.ts'
import type { Doc } from '../ports/read-store.ts'
import type { Environment } from '../domain/shared.ts'
import { alreadyApplied, collection, documentsProjection, erasing, type Projection, type Write } from '../eventsourcing/projection.ts'
import type { ReadContext } from './read-context.ts'
import { DAY_MS, dayOf, HOUR_MS, hourOf, SLOT_MS, slotOf, type Bucket } from './buckets.ts'

const VERDICTS = ['valid', 'invalid', 'risky', 'unknown'] as const

/** Usage of one account in one environment in one 15-minute slot (UTC): what `GET /api/stats/overview` adds up. */
interface UsageSlotDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  /** Live usage, or the sandbox's (test keys): apart, so that each credential reads its own (issue 42 item 10). */
  environment: Environment
  slot: string
  submitted: number
  completed: Record<string, number>
  failed: number
  /** Reasons of completed jobs. */
  reasons: Record<string, number>
  /** Checks that ran, by name. */
  checks: Record<string, number>
  tokens_spent: number
}

/** All-time figures over every account (nothing personal): `GET /api/stats/summary`. */
export interface SummaryDoc {
  [k: string]: unknown
  _id: string
  verifications: number
  by_verdict: Record<string, number>
  by_reason: Record<string, number>
  checks_run: number
  since: string | null
  updated_at: string | null
}

/**
 * Per account, environment and slot (index user_uuid, slot; the environment a filter on
 * it): a window of N days reads at most 2 × 96 × N documents (both environments), or 96 × N
 * of one environment's and as many of the other's passed over.
 */
export const USAGE_SLOTS = collection({
  name: 'usage_slots',
  projection: 'stats',
  fields: { user_uuid: 'text', environment: 'text', slot: 'text' },
  indexes: [['user_uuid', 'slot']]
})
/** The slots added up per account, environment and UTC hour (`slot`: the hour's start): at most 2 × 24 × N documents for N days. */
export const USAGE_HOURS = collection({
  name: 'usage_hours',
  projection: 'stats',
  fields: { user_uuid: 'text', environment: 'text', slot: 'text' },
  indexes: [['user_uuid', 'slot']]
})
/** The slots added up per account, environment and UTC day (`slot`: the day's start): at most 2 × N documents for N days. */
export const USAGE_DAYS = collection({
  name: 'usage_days',
  projection: 'stats',
  fields: { user_uuid: 'text', environment: 'text', slot: 'text' },
  indexes: [['user_uuid', 'slot']]
})
/** One document. */
const SUMMARY = collection({ name: 'stats_summary', projection: 'stats', fields: {}, indexes: [] })

/** The usage collections, finest first, each with the start of the unit (UTC) an instant falls in. */
const LEVELS = [
  { spec: USAGE_SLOTS, unit: SLOT_MS, start: slotOf },
  { spec: USAGE_HOURS, unit: HOUR_MS, start: hourOf },
  { spec: USAGE_DAYS, unit: DAY_MS, start: dayOf }
] as const

/** A usage document's id: the account, the environment (live documents keep the id they had before environments were apart) and the slot. */
const usageId = (user: string, environment: Environment, slot: string): string => (environment === 'live' ? `${user}|${slot}` : `${user}|test|${slot}`)

const emptySlot = (user: string, environment: Environment, slot: string): UsageSlotDoc => ({
  _id: usageId(user, environment, slot),
  user_uuid: user,
  environment,
  slot,
  submitted: 0,
  completed: {},
  failed: 0,
  reasons: {},
  checks: {},
  tokens_spent: 0
})
/**
 * `m` with each `[key, n]` of `counts` added: a new object (one copy, however many counts),
 * `m` unchanged; `m` itself when there is nothing to add (documents are values: sharing an
 * unchanged map between two versions of a document is safe, and most usage events add to
 * one map of three or none).
 */
function addAll(m: Readonly<Record<string, number>>, counts: ReadonlyArray<readonly [string, number]>): Readonly<Record<string, number>> {
  if (counts.length === 0) return m
  const out = { ...m }
  for (const [key, n] of counts) out[key] = (out[key] ?? 0) + n
  return out
}
const once = (key: string): readonly [string, number] => [key, 1]

type UsageEvent = JobQueued | JobCompleted | JobFailed | TokensCaptured | BatchItemsAdded | BatchResultsRecorded

type Counts = ReadonlyArray<readonly [string, number]>

/** What one usage event adds to its slot, hour and day (the maps' additions as `[key, n]`, a key possibly more than once). */
interface UsageDelta {
  submitted: number
  failed: number
  tokens_spent: number
  completed: Counts
  reasons: Counts
  checks: Counts
}

/** The counts a usage event adds (computed once for the three documents it changes). */
function usageDelta(e: UsageEvent): UsageDelta {
  const d: UsageDelta = { submitted: 0, failed: 0, tokens_spent: 0, completed: [], reasons: [], checks: [] }
  switch (e.type) {
    case 'JobQueued':
      d.submitted = 1
      break
    case 'JobFailed':
      d.failed = 1
      break
    case 'TokensCaptured':
      d.tokens_spent = e.data.amount
      break
    case 'BatchItemsAdded': {
      // Every item is submitted; one with bad syntax is completed `invalid` at once (only syntax ran).
      const invalid = e.data.items.filter(item => item.invalid === true).length
      d.submitted = e.data.items.length
      if (invalid > 0) {
        d.completed = [['invalid', invalid]]
        d.reasons = [['invalid_syntax', invalid]]
        d.checks = [['syntax', invalid]]
      }
      break
    }
    case 'BatchResultsRecorded':
      // Results carry no per-check detail: batch items add to verdicts and reasons, not to `checks`.
      d.completed = e.data.results.map(r => once(r.verdict))
      d.reasons = e.data.results.map(r => once(r.reason))
      break
    case 'JobCompleted':
      d.completed = [once(e.data.verdict)]
      d.reasons = [once(e.data.reason)]
      d.checks = ranChecks(e).map(once)
  }
  return d
}

/** A usage document with `d` added: a new document. */
function addUsage(doc: UsageSlotDoc, d: UsageDelta): UsageSlotDoc {
  return {
    ...doc,
    submitted: doc.submitted + d.submitted,
    failed: doc.failed + d.failed,
    tokens_spent: doc.tokens_spent + d.tokens_spent,
    completed: addAll(doc.completed, d.completed),
    reasons: addAll(doc.reasons, d.reasons),
    checks: addAll(doc.checks, d.checks)
  }
}

/** The checks a completed job ran (not skipped). */
const ranChecks = (e: JobCompleted): string[] =>
  ((e.data.result.checks ?? []) as Array<{ name: string; outcome: string }>).filter(c => c.outcome !== 'skipped').map(c => c.name)

/** The summary before the first live verification. */
const noVerifications = (): SummaryDoc => ({
  _id: 'all',
  verifications: 0,
  by_verdict: {},
  by_reason: {},
  checks_run: 0,
  since: null,
  updated_at: null
})

/** The all-time summary with the live results of usage delta `d` added (its verdicts, reasons and checks run are theirs), at `when`: a new document. */
function addToSummary(sum: SummaryDoc, d: UsageDelta, when: string): SummaryDoc {
  let verifications = 0
  for (const [, n] of d.completed) verifications += n
  let checksRun = 0
  for (const [, n] of d.checks) checksRun += n
  return {
    ...sum,
    verifications: sum.verifications + verifications,
    by_verdict: addAll(sum.by_verdict, d.completed),
    by_reason: addAll(sum.by_reason, d.reasons),
    checks_run: sum.checks_run + checksRun,
    since: sum.since === null || when < sum.since ? when : sum.since,
    updated_at: sum.updated_at === null || when > sum.updated_at ? when : sum.updated_at
  }
}

/** Each usage event's field of when it happened (the instant its slot, hour and day are taken from). */
const OCCURRED_AT: { readonly [T in UsageEvent['type']]: keyof Extract<UsageEvent, { type: T }>['data'] } = {
  JobQueued: 'queued_at',
  JobCompleted: 'completed_at',
  JobFailed: 'failed_at',
  TokensCaptured: 'captured_at',
  BatchItemsAdded: 'added_at',
  BatchResultsRecorded: 'recorded_at'
}

/** When a usage event happened. */
const occurredAt = (e: UsageEvent): string => (e.data as Record<string, unknown>)[OCCURRED_AT[e.type]] as string

/**
 * The environment a usage event counts in: the job's or the batch's as the event carries
 * it; an event written before events carried it is read from what it does say (a job's
 * sandbox result, a batch's `sandbox` results) or else as live. Tokens are live only.
 */
function environmentOfUsage(e: UsageEvent): Environment {
  switch (e.type) {
    case 'JobQueued':
      return e.data.environment
    case 'JobCompleted':
      return e.data.environment ?? (e.data.result.sandbox === true ? 'test' : 'live')
    case 'JobFailed':
    case 'BatchItemsAdded':
      return e.data.environment ?? 'live'
    case 'BatchResultsRecorded':
      return e.data.sandbox ? 'test' : 'live'
    case 'TokensCaptured':
      return 'live'
  }
}

/** Whether an event adds live verifications to the all-time summary: results of a job or a batch, not sandbox ones. */
const isLive = (e: UsageEvent): boolean =>
  (e.type === 'BatchResultsRecorded' && !e.data.sandbox) || (e.type === 'JobCompleted' && e.data.result.sandbox !== true)

const tombstoneOf = (user: string): string => `${user}|erased`

/**
 * The statistics' fold (pure): from the account's tombstone (erased: nothing more), its
 * slot, hour and day documents and the summary, the writes of one usage event. Each
 * counting document keeps the position of the last event it added (a second delivery adds
 * nothing).
 */
function evolveStats(docs: ReadonlyArray<Doc | null>, event: RecordedEvent): Write[] {
  const user = event.data.user_uuid as string
  if (event.type === 'UserDeleted')
    return [
      ...erasing(
        LEVELS.map(l => l.spec),
        user
      ),
      { put: USAGE_SLOTS, doc: { _id: tombstoneOf(user), user_uuid: null, slot: null } }
    ]
  if (docs[0] !== null) return []
  const e = event as unknown as UsageEvent
  const at = occurredAt(e)
  const delta = usageDelta(e)
  const environment = environmentOfUsage(e)
  const writes: Write[] = []
  LEVELS.forEach((level, i) => {
    const doc = docs[1 + i] as UsageSlotDoc | null
    if (alreadyApplied(doc, event)) return
    writes.push({ put: level.spec, doc: { ...addUsage(doc ?? emptySlot(user, environment, level.start(at)), delta), position: event.position } })
  })
  const sum = (docs[4] as SummaryDoc | null | undefined) ?? noVerifications()
  if (isLive(e) && !alreadyApplied(sum, event)) writes.push({ put: SUMMARY, doc: { ...addToSummary(sum, delta, at), position: event.position } })
  return writes
}

/**
 * Statistics an analyst can rebuild: per account, environment and 15-minute slot, jobs and batch items
 * submitted, completed by verdict and reason, failed, checks run (jobs) and tokens
 * charged, added up again per UTC hour and per UTC day (a long window reads those); and
 * the all-time summary of live (not sandbox) verifications over every account (it keeps
 * the counts of erased accounts: nothing in it is personal).
 */
export const statsProjection: Projection = documentsProjection({
  // 3: batch items count as submitted and completed like jobs. 4: hours and days. 5: documents keep their last event's position.
  // 6: live and sandbox usage apart (issue 42 item 10).
  version: 6,
  collections: [USAGE_SLOTS, USAGE_HOURS, USAGE_DAYS, SUMMARY],
  event_types: ['JobQueued', 'JobCompleted', 'JobFailed', 'TokensCaptured', 'BatchItemsAdded', 'BatchResultsRecorded', 'UserDeleted'],
  reads: event => {
    const user = event.data.user_uuid as string
    if (event.type === 'UserDeleted') return []
    const e = event as unknown as UsageEvent
    const at = occurredAt(e)
    const environment = environmentOfUsage(e)
    const levels = LEVELS.map(l => [l.spec, usageId(user, environment, l.start(at))] as const)
    // The summary only for live results (most events do not change it).
    return [[USAGE_SLOTS, tombstoneOf(user)], ...levels, ...(isLive(e) ? [[SUMMARY, 'all'] as const] : [])]
  },
  evolve: evolveStats
})

/** Usage over a window, per bucket (interface `GET /api/stats/overview`). */
export interface Overview {
  verdicts: Record<string, number>
  reasons: Record<string, number>
  checks: Record<string, number>
  totals: { submitted: number; completed: number; failed: number; tokens_spent: number }
  series: Array<{ start: string; end: string; submitted: number; completed: number; failed: number; tokens_spent: number; verdicts: Record<string, number> }>
}

type Level = (typeof LEVELS)[number]
/** A range of one usage collection to read: [start, end) in epoch ms, whole units of the level. */
type Span = { level: Level; start: number; end: number }

/** What a range query costs beside its documents, counted in documents read (a query's overhead is about 15 documents' worth). */
const QUERY_COST_DOCS = 15

/**
 * The usage documents that cover `buckets`, each wholly inside one bucket: within a bucket,
 * UTC days where whole days fit, UTC hours where whole hours fit, 15-minute slots for the
 * rest (every zone's offset is a multiple of 15 minutes, so every boundary is a slot's).
 * Adjacent spans of one collection are merged (in UTC from a day up: one span of days).
 */
function coveringSpans(buckets: readonly Bucket[]): Span[] {
  const out: Span[] = []
  const last = new Map<Level, Span>()
  const push = (level: Level, start: number, end: number): void => {
    const prev = last.get(level)
    if (prev !== undefined && prev.end === start) prev.end = end
    else {
      const span = { level, start, end }
      out.push(span)
      last.set(level, span)
    }
  }
  const cover = (start: number, end: number, at: number): void => {
    if (start >= end) return
    const level = LEVELS[at]
    const from = Math.ceil(start / level.unit) * level.unit
    const to = Math.floor(end / level.unit) * level.unit
    if (at === 0 || from >= to) {
      if (at === 0) push(level, start, end)
      else cover(start, end, at - 1)
      return
    }
    cover(start, from, at - 1)
    push(level, from, to)
    cover(to, end, at - 1)
  }
  for (const b of buckets) cover(Date.parse(b.start), Date.parse(b.end), LEVELS.length - 1)
  return out
}

/**
 * `owner`'s usage in `environment` (null: both added up) in `buckets` (oldest first,
 * contiguous), added up per bucket and in all. Read (index user_uuid, slot; the
 * environment a filter on it, so each plan reads at most twice its documents) by the
 * cheaper of two plans, counting the documents each may
 * read and QUERY_COST_DOCS a query: one range of the coarsest usage collection every bucket
 * boundary falls on (UTC days for UTC buckets from a day up; UTC hours for a zone whose
 * offset is whole hours; else 15-minute slots, 96 a day), or the spans that cover each
 * bucket with its whole days, then hours, then slots (a year by month in a half-hour zone:
 * about 60 small ranges, not 35,040 slots). Cost: at most the first plan's.
 */
export async function usageOverview(
  rc: Pick<ReadContext, 'reads'>,
  owner: string,
  environment: Environment | null,
  buckets: readonly Bucket[]
): Promise<Overview> {
  const onBoundaries = (unit: number): boolean => buckets.every(b => Date.parse(b.start) % unit === 0 && Date.parse(b.end) % unit === 0)
  const level = [...LEVELS].reverse().find(l => onBoundaries(l.unit)) ?? LEVELS[0]
  const cost = (spans: readonly Span[]): number => spans.reduce((c, r) => c + (r.end - r.start) / r.level.unit + QUERY_COST_DOCS, 0)
  const whole: Span[] = buckets.length === 0 ? [] : [{ level, start: Date.parse(buckets[0].start), end: Date.parse(buckets[buckets.length - 1].end) }]
  const covering = coveringSpans(buckets)
  const plan = cost(covering) < cost(whole) ? covering : whole
  const found = await Promise.all(
    plan.map(
      async r =>
        await rc.reads.collection<UsageSlotDoc>(r.level.spec).find({
          where: {
            user_uuid: owner,
            ...(environment !== null && { environment }),
            slot: { gte: new Date(r.start).toISOString(), lte: new Date(r.end - 1).toISOString() }
          },
          sort: [['slot', 1]]
        })
    )
  )
  // Every document lies wholly inside one bucket: in order of their starts, they walk the buckets once.
  const slots = found.length === 1 ? found[0] : found.flat().sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0))
  const zero = (): Record<string, number> => Object.fromEntries(VERDICTS.map(v => [v, 0]))
  const out: Overview = {
    verdicts: zero(),
    reasons: {},
    checks: {},
    totals: { submitted: 0, completed: 0, failed: 0, tokens_spent: 0 },
    series: buckets.map(b => ({ ...b, submitted: 0, completed: 0, failed: 0, tokens_spent: 0, verdicts: zero() }))
  }
  let i = 0
  for (const s of slots) {
    while (i < buckets.length && s.slot >= buckets[i].end) i++
    if (i === buckets.length) break
    const b = out.series[i]
    const completed = Object.values(s.completed).reduce((a, n) => a + n, 0)
    b.submitted += s.submitted
    b.completed += completed
    b.failed += s.failed
    b.tokens_spent += s.tokens_spent
    out.totals.submitted += s.submitted
    out.totals.completed += completed
    out.totals.failed += s.failed
    out.totals.tokens_spent += s.tokens_spent
    for (const [v, n] of Object.entries(s.completed)) {
      b.verdicts[v] = (b.verdicts[v] ?? 0) + n
      out.verdicts[v] = (out.verdicts[v] ?? 0) + n
    }
    for (const [r, n] of Object.entries(s.reasons)) out.reasons[r] = (out.reasons[r] ?? 0) + n
    for (const [c, n] of Object.entries(s.checks)) out.checks[c] = (out.checks[c] ?? 0) + n
  }
  return out
}

/** The all-time public summary (one document). */
export async function summary(rc: Pick<ReadContext, 'reads'>): Promise<SummaryDoc> {
  const { position: _, ...sum } = (await rc.reads.collection<SummaryDoc & { position?: number }>(SUMMARY).get('all')) ?? noVerifications()
  return sum
}
