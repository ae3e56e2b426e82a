import type { FastifyInstance, FastifyReply } from 'fastify'
import { z } from 'zod'
import { DateTime } from 'luxon'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { CHECK_NAMES } from '../../domain/checks.ts'
import { getJob, type JobDoc } from '../../projections/jobs.ts'
import { JOB_SORTS, listJobs } from '../../projections/list-jobs.ts'
import { environmentOf, listedEnvironment, principalOf, type Principal } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { waitedRead } from '../waited-read.ts'
import {
  CheckNameSchema,
  CheckOutcomeSchema,
  EnvironmentQuery,
  FlagSchema,
  PageQuery,
  listOf,
  Paginated,
  ReasonSchema,
  Timestamp,
  UuidParams,
  VerdictSchema,
  WaitQuery,
  problems
} from '../schemas.ts'
import { jobAddressIndex } from '../../lib/crypto/address-index.ts'
import { MAX_EMAIL_INPUT } from '../../flows/job-submission/submit-job.ts'
import type { HttpRuntime } from '../runtime.ts'

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i

/** An RFC 3339 date-time, read as the UTC instant it names. */
const DateTimeQuery = z
  .string()
  .regex(RFC3339, 'must be an RFC 3339 date-time')
  .refine(s => DateTime.fromISO(s, { setZone: true }).isValid, 'not a date-time of the calendar')
  .transform(s => DateTime.fromISO(s, { setZone: true }).toUTC().toISO()!)
  .meta({ format: 'date-time' })

const ListJobsQuery = PageQuery.extend({
  ...EnvironmentQuery.shape,
  status: listOf(['queued', 'deferred', 'completed', 'failed'], 'status').optional(),
  verdict: listOf(['valid', 'invalid', 'risky', 'unknown'], 'verdict').optional(),
  from: DateTimeQuery.optional().meta({ description: 'inclusive lower bound on created_at' }),
  to: DateTimeQuery.optional().meta({ description: 'inclusive upper bound on created_at' }),
  search: z
    .string()
    .max(MAX_EMAIL_INPUT)
    .refine(s => s.includes('@') || /^[0-9a-fA-F-]{0,36}$/.test(s), 'must be the start of a uuid, or an address')
    .optional()
    .meta({
      description:
        "the start of the job's uuid (case-insensitive), or an address: that address's jobs, whatever its case or its domain's form (`Jane@Bücher.net` finds `jane@xn--bcher-kva.net`); jobs queued before addresses were indexed are found by uuid only"
    }),
  sort: z
    .enum(JOB_SORTS, { message: `unknown sort; one of: ${JOB_SORTS.join(', ')}` })
    .optional()
    .meta({ description: 'default created_at' }),
  order: z.enum(['asc', 'desc'], { message: 'unknown order; asc or desc' }).optional().meta({ description: 'default desc' })
})

/** Verification jobs listed and read (docs/interface.md §4, "Verification jobs"). */
export function jobRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Verification jobs']

  app.route({
    method: 'GET',
    url: '/api/jobs',
    config: { auth: 'any', scope: 'results:read', invalid: 'list_jobs.invalid_query' },
    schema: {
      operationId: 'listJobs',
      summary:
        "The account's jobs: filtered by environment, status, verdict, creation, uuid prefix or address, sorted, paged (newest first by default); a key sees its own environment's only",
      tags,
      querystring: ListJobsQuery,
      response: { 200: Paginated(Job), ...problems(400, 401, 403, 429) }
    },
    handler: async request => {
      const q = request.query
      const p = principalOf(request)
      const environment = listedEnvironment(p, q.environment, 'list_jobs') ?? undefined
      const { items, total } = await listJobs(
        rt.ctx,
        p.user_uuid,
        {
          environment,
          status: q.status,
          verdict: q.verdict,
          from: q.from,
          to: q.to,
          // An address is looked up by its blind index (nothing is unsealed to search); anything else is a uuid prefix.
          ...(q.search?.includes('@') ? { email_index: jobAddressIndex(rt.ctx, p.user_uuid, q.search) } : { search: q.search?.toLowerCase() })
        },
        q.sort ?? 'created_at',
        q.order === 'asc' ? 1 : -1,
        { limit: q.limit, offset: q.offset }
      )
      return { items: items.map(jobView), total, limit: q.limit, offset: q.offset }
    }
  })

  app.route({
    method: 'GET',
    url: '/api/jobs/:uuid',
    config: { auth: 'any', scope: 'results:read' },
    schema: {
      operationId: 'getJob',
      summary: 'A job with its per-check detail; with `wait`, answered as soon as the job ends (or when the wait is over)',
      tags,
      params: UuidParams,
      querystring: WaitQuery,
      response: { 200: Job, ...problems(400, 401, 403, 404, 429) }
    },
    handler: async (request, reply) => await ownJob(rt, principalOf(request), request.params.uuid, { seconds: request.query.wait, reply })
  })
}

/** The engine's answer for one address (docs/design/verification.md "Result of one address"), as a job shows it. */
const JobResult = z
  .object({
    normalized: z.string().nullable(),
    verdict: VerdictSchema,
    reason: ReasonSchema,
    score: z.number().meta({ description: '0–100: how likely mail to the address is delivered and read; 0 for invalid, 80–100 only for valid' }),
    score_breakdown: z.array(z.object({ factor: z.string(), points: z.number() })),
    flags: z.array(FlagSchema),
    did_you_mean: z.string().nullable().meta({ description: 'a correction when the domain looks like a typo (`jane@gmial.com` → `jane@gmail.com`)' }),
    mx: z.object({ host: z.string(), preference: z.number(), provider: z.string().nullable() }).nullable(),
    smtp: z.object({ code: z.number(), enhanced_code: z.string().nullable(), message: z.string() }).nullable(),
    checks: z
      .array(
        z.object({
          name: CheckNameSchema,
          outcome: CheckOutcomeSchema,
          duration_ms: z.number().meta({ description: 'milliseconds' }),
          detail: z.string().nullable()
        })
      )
      .meta({ description: 'each check that ran, in order, with what it found' }),
    retryable: z.boolean().meta({ description: 'whether asking again later may give a firmer answer' }),
    checked_at: Timestamp,
    cached: z.boolean(),
    sandbox: z.boolean()
  })
  .meta({ id: 'JobResult' })

/** A verification job (docs/interface.md §2: uuid, status, score, verdict, created_at, per-check detail). */
export const Job = z
  .object({
    uuid: z.string(),
    status: z.enum(['queued', 'deferred', 'completed', 'failed']),
    email: z.string(),
    verdict: VerdictSchema.nullable(),
    reason: ReasonSchema.nullable(),
    score: z.number().nullable(),
    checks: z.array(CheckNameSchema),
    cost: z.number().meta({ description: 'tokens reserved at submission (0 for test keys): the price of the checks asked for; what was taken is `charged`' }),
    charged: z.number().nullable().meta({
      description:
        'tokens taken from the reservation when the job ended: the checks that ran (0 for an `unknown` that could not answer, a failed job, test keys), the rest released; null until it ends'
    }),
    environment: z.enum(['live', 'test']),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    attempts: z.number().meta({ description: 'greylisting retries so far' }),
    retry_at: Timestamp.nullable(),
    deferral: z
      .object({
        reason: z.enum(['greylisted', 'egress_blocked']).meta({
          description:
            '`greylisted`: the receiving server asked us to come back later (450/451); `egress_blocked`: this service cannot reach mail servers now (port 25 or DNS blocked on its side), so the live check is held, its tokens reserved'
        }),
        deadline_at: Timestamp.meta({
          description: 'the latest it waits: then it is asked once more, and ends `unknown` (not charged) if it still cannot be answered'
        })
      })
      .nullable()
      .meta({ description: 'while `deferred`: why the job waits and until when at the latest; null otherwise' }),
    error: z.string().nullable(),
    result: JobResult.nullable()
  })
  .meta({
    id: 'Job',
    examples: [
      {
        uuid: '0193a1f2-7c4e-7a10-9b2c-3d4e5f607182',
        status: 'completed',
        email: 'jane@example.com',
        verdict: 'valid',
        reason: 'accepted_email',
        score: 95,
        checks: [...CHECK_NAMES],
        cost: 10,
        charged: 10,
        environment: 'live',
        created_at: '2026-11-23T10:00:00.000Z',
        completed_at: '2026-11-23T10:00:01.240Z',
        attempts: 0,
        retry_at: null,
        deferral: null,
        error: null,
        result: {
          normalized: 'jane@example.com',
          verdict: 'valid',
          reason: 'accepted_email',
          score: 95,
          score_breakdown: [
            { factor: 'reason:accepted_email', points: 100 },
            { factor: 'flag:free', points: -5 }
          ],
          flags: ['free'],
          did_you_mean: null,
          mx: { host: 'mx1.example.com', preference: 10, provider: null },
          smtp: { code: 250, enhanced_code: '2.1.5', message: 'OK' },
          checks: [
            { name: 'syntax', outcome: 'pass', duration_ms: 0.1, detail: null },
            { name: 'typo', outcome: 'pass', duration_ms: 0.2, detail: null },
            { name: 'disposable', outcome: 'pass', duration_ms: 0.1, detail: null },
            { name: 'role', outcome: 'pass', duration_ms: 0, detail: null },
            { name: 'free', outcome: 'pass', duration_ms: 0, detail: 'free mailbox provider' },
            { name: 'dns', outcome: 'pass', duration_ms: 12.4, detail: 'MX mx1.example.com (10)' },
            { name: 'smtp', outcome: 'pass', duration_ms: 830.2, detail: 'mx1.example.com (TLS): 250 2.1.5 OK' },
            { name: 'catch_all', outcome: 'pass', duration_ms: 0, detail: 'the domain rejects unknown addresses' }
          ],
          retryable: false,
          checked_at: '2026-11-23T10:00:01.200Z',
          cached: false,
          sandbox: false
        }
      },
      {
        uuid: '0193a1f2-7c4e-7a10-9b2c-3d4e5f607183',
        status: 'queued',
        email: 'john@example.org',
        verdict: null,
        reason: null,
        score: null,
        checks: [...CHECK_NAMES],
        cost: 10,
        charged: null,
        environment: 'live',
        created_at: '2026-11-23T10:00:00.000Z',
        completed_at: null,
        attempts: 0,
        retry_at: null,
        deferral: null,
        error: null,
        result: null
      }
    ]
  })
export type JobView = z.infer<typeof Job>

/**
 * A job of the caller's account and environment (`environmentOf`), as the API shows it;
 * with `wait`, as soon as it ends or once the wait is over (see `waitedRead`).
 * @throws HttpProblem 404 `job.not_found` for an unknown job, another account's or another environment's.
 */
export async function ownJob(rt: HttpRuntime, p: Principal, uuid: string, wait: { seconds: number; reply: FastifyReply } | null = null): Promise<JobView> {
  const read = async (): Promise<JobDoc | null> => await getJob(rt.ctx, p.user_uuid, environmentOf(p), uuid)
  const doc = wait === null ? await read() : await waitedRead(rt, wait.reply, p.user_uuid, uuid, wait.seconds, read, d => d === null || TERMINAL.has(d.status))
  if (!doc) throw new HttpProblem(404, 'job.not_found', 'no such job')
  return jobView(doc)
}

/** Job statuses a wait ends at. */
const TERMINAL = new Set(['completed', 'failed'])

/** The public view of a job. */
export function jobView(j: JobDoc): JobView {
  return {
    uuid: j.uuid,
    status: j.status,
    email: j.email,
    verdict: j.verdict as JobView['verdict'],
    reason: j.reason as JobView['reason'],
    score: j.score,
    checks: j.checks as JobView['checks'],
    cost: j.cost,
    charged: j.status === 'completed' || j.status === 'failed' ? (j.charged ?? null) : null,
    environment: j.environment,
    created_at: j.created_at,
    completed_at: j.completed_at,
    attempts: j.attempts,
    retry_at: j.retry_at,
    deferral: j.status === 'deferred' ? (j.deferral ?? null) : null,
    error: j.error,
    result: j.result as JobView['result']
  }
}
