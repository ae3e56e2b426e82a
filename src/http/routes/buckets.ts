import { z } from 'zod'
import { bucketsOf, clampDays, GRANULARITIES, isTimeZone, type Bucket, type Granularity } from '../../projections/buckets.ts'
import { asInteger } from '../schemas.ts'

/**
 * `granularity`, `days` and `time_zone` of the statistics and balance-history reads
 * (docs/interface.md §8): granularity `hour`, `day` (default), `week`, `month`; days an
 * int32 of at least 0, default 28, clamped to 1..364; an IANA time zone (default UTC) in
 * which days, weeks and months begin.
 */
export const BucketQuery = z.object({
  granularity: z
    .enum(GRANULARITIES, { message: `unknown granularity; one of: ${GRANULARITIES.join(', ')}` })
    .optional()
    .meta({ description: 'default day' }),
  days: z
    .string()
    .regex(/^\d{1,10}$/, 'must be a whole number of at least 0')
    .transform(Number)
    .pipe(z.number().int().max(2_147_483_647, 'must be an int32'))
    .optional()
    .meta(asInteger(0, 'default 28; clamped to 1..364', { maximum: 2_147_483_647, format: 'int32' })),
  time_zone: z
    .string()
    .max(64)
    .refine(isTimeZone, 'unknown time zone')
    .optional()
    .meta({ description: 'IANA time zone in which buckets begin, default UTC', examples: ['Europe/Paris'] })
})

/** The buckets a read asks for, oldest first, ending with the one that holds `now`. */
export function bucketsOfQuery(q: z.infer<typeof BucketQuery>, now: Date): { buckets: Bucket[]; granularity: Granularity; days: number; tz: string } {
  const granularity = q.granularity ?? 'day'
  const days = clampDays(q.days)
  const tz = q.time_zone ?? 'UTC'
  return { buckets: bucketsOf(now, granularity, days, tz), granularity, days, tz }
}
