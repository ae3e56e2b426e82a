import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { DateTime } from 'luxon'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { JOB_SORTS, listJobs } from '../../projections/jobs.ts'
import { listedEnvironment, principalOf } from '../plugins/auth.ts'
import { Job, jobView, ownJob } from './verify.ts'
import { EnvironmentQuery, PageQuery, Paginated, UuidParams, WaitQuery, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i

/** A comma-separated list of known values, OR-ed (interface `GET /api/jobs`). */
const listOf = <T extends string>(values: readonly T[], what: string) =>
  z
    .string()
    .transform(s =>
      s
        .split(',')
        .map(v => v.trim())
        .filter(v => v !== '')
    )
    .pipe(
      z
        .array(z.enum(values as unknown as [T, ...T[]], { message: `unknown ${what}; one of: ${values.join(', ')}` }))
        .min(1, `${what} must name at least one value`)
    )
    .meta({ description: `comma-separated, OR-ed: ${values.join(', ')}` })

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
    .max(36)
    .regex(/^[0-9a-fA-F-]*$/, 'must be the start of a uuid')
    .optional()
    .meta({ description: 'case-insensitive prefix of the job uuid' }),
  sort: z
    .enum(JOB_SORTS, { message: `unknown sort; one of: ${JOB_SORTS.join(', ')}` })
    .optional()
    .meta({ description: 'default created_at' }),
  order: z.enum(['asc', 'desc'], { message: 'unknown order; asc or desc' }).optional().meta({ description: 'default desc' })
})

/** Verification jobs listed and read (interface section 4, "Verification jobs"). */
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
        "The account's jobs: filtered by environment, status, verdict, creation and uuid prefix, sorted, paged (newest first by default); a key sees its own environment's only",
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
        { environment, status: q.status, verdict: q.verdict, from: q.from, to: q.to, search: q.search?.toLowerCase() },
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
