import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { summary, usageOverview } from '../../projections/stats.ts'
import { listedEnvironment, principalOf } from '../plugins/auth.ts'
import { EnvironmentQuery, Timestamp, problems } from '../schemas.ts'
import { BucketQuery, bucketsOfQuery } from './buckets.ts'
import type { HttpRuntime } from '../runtime.ts'

const Counts = z.record(z.string(), z.number().int())

/** `GET /api/stats/overview` (interface "Notifications and statistics"): verdict breakdown, activity series, check usage, totals. */
const Overview = z
  .object({
    granularity: z.string(),
    days: z.number().int(),
    time_zone: z.string(),
    environment: z
      .enum(['live', 'test'])
      .nullable()
      .meta({ description: "whose usage: a key's own environment's, an agent's the live one's, a session's the one it names or both (null)" }),
    totals: z.object({
      submitted: z.number().int().meta({ description: 'jobs submitted in the window' }),
      completed: z.number().int(),
      failed: z.number().int(),
      tokens_spent: z.number().int().meta({ description: 'tokens captured in the window' })
    }),
    verdicts: Counts.meta({ description: 'completed jobs by verdict (every verdict present, zero when none)' }),
    reasons: Counts.meta({ description: 'completed jobs by reason' }),
    checks: Counts.meta({ description: 'checks that ran, by name' }),
    series: z
      .array(
        z.object({
          start: Timestamp,
          end: Timestamp.meta({ description: 'exclusive' }),
          submitted: z.number().int(),
          completed: z.number().int(),
          failed: z.number().int(),
          tokens_spent: z.number().int(),
          verdicts: Counts
        })
      )
      .meta({ description: 'one entry per bucket, oldest first, zero-filled, the last one open' })
  })
  .meta({ id: 'StatsOverview' })

/** `GET /api/stats/summary`: all-time figures over every account, nothing personal. */
const Summary = z
  .object({
    verifications: z.number().int().meta({ description: 'live verifications completed (sandbox runs excluded)' }),
    by_verdict: Counts,
    by_reason: Counts,
    checks_run: z.number().int(),
    since: Timestamp.nullable().meta({ description: 'the first verification counted' }),
    updated_at: Timestamp.nullable().meta({ description: 'the latest verification counted' })
  })
  .meta({
    id: 'StatsSummary',
    examples: [
      {
        verifications: 1204,
        by_verdict: { valid: 900, invalid: 200, risky: 80, unknown: 24 },
        by_reason: { accepted_email: 900 },
        checks_run: 6020,
        since: '2026-01-02T09:00:00.000Z',
        updated_at: '2026-11-23T10:00:00.000Z'
      }
    ]
  })

/** Statistics (interface "Notifications and statistics"), from the `stats` projection. */
export function statsRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Statistics']

  app.route({
    method: 'GET',
    url: '/api/stats/overview',
    config: { auth: 'any', scope: 'usage:read', invalid: 'stats_overview.invalid_query' },
    schema: {
      operationId: 'getStatsOverview',
      summary: "The account's usage over a window: verdicts, reasons, checks, totals and a zero-filled series of buckets",
      tags,
      querystring: BucketQuery.extend(EnvironmentQuery.shape),
      response: { 200: Overview, ...problems(400, 401, 403) }
    },
    handler: async request => {
      const p = principalOf(request)
      const environment = listedEnvironment(p, request.query.environment, 'stats_overview')
      const { buckets, granularity, days, tz } = bucketsOfQuery(request.query, rt.ctx.now())
      const o = await usageOverview(rt.ctx, p.user_uuid, environment, buckets)
      return { granularity, days, time_zone: tz, environment, ...o }
    }
  })

  app.route({
    method: 'GET',
    url: '/api/stats/summary',
    config: { auth: 'none' },
    schema: {
      operationId: 'getStatsSummary',
      summary: 'All-time public verification statistics over every account',
      tags,
      response: { 200: Summary, ...problems() }
    },
    handler: async () => {
      const { _id, ...s } = await summary(rt.ctx)
      return s
    }
  })
}
