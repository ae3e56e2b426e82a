import { z } from 'zod'

/**
 * Schemas shared by the routes (interface sections 4, 7, 8): the problem+json error, path
 * identifiers, pagination, timestamps. Every route declares its params, query, body and
 * each response status with zod; validation, serialization and the OpenAPI document all
 * come from that one declaration (ARCHITECTURE.md "HTTP conventions").
 */

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** RFC 9457 problem details with the machine `code` (ARCHITECTURE.md "HTTP conventions"). */
export const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.string().meta({ description: 'machine code, `<operation>.<reason>`' }),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional().meta({ description: 'one entry per invalid field' })
}).meta({ id: 'Problem', description: 'RFC 9457 problem details (application/problem+json)', examples: [{ type: '/problems/submit_job.insufficient_tokens', title: 'Payment Required', status: 402, detail: 'this check costs 10 tokens; the wallet holds 4', code: 'submit_job.insufficient_tokens' }] })

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request', 401: 'Missing or invalid credential', 402: 'Wallet balance too low', 403: 'Missing scope, or not allowed by the plan',
  404: 'Not found (or not the caller\'s)', 409: 'Conflict', 410: 'Gone: the account was deleted meanwhile', 413: 'Body too large', 415: 'Unsupported media type', 422: 'Unprocessable: an Idempotency-Key reused for another request',
  429: 'Too many requests, or temporarily locked', 500: 'Unexpected error', 503: 'Unavailable'
}

/** A JSON answer with its description, as a route declares it for one status. */
export function json<T extends z.ZodType> (schema: T, description: string): { description: string, content: { 'application/json': { schema: T } } } {
  return { description, content: { 'application/json': { schema } } }
}

/** A problem+json answer, as a route declares it for one status. */
export interface ProblemResponse { description: string, content: { 'application/problem+json': { schema: typeof Problem } } }

/** The problem+json answers of `statuses`, plus 500 which any operation may answer. */
export function problems (...statuses: number[]): Record<number, ProblemResponse> {
  const out: Record<number, ProblemResponse> = {}
  for (const s of [...statuses, 500]) out[s] = { description: STATUS_TEXT[s] ?? 'Error', content: { 'application/problem+json': { schema: Problem } } }
  return out
}

/** Answers that any operation with a JSON body may also give. */
export const BODY_PROBLEMS = [400, 413, 415] as const

/** A `{uuid}` path parameter: a UUID, any case, read lower-cased (interface section 2: a malformed one is a 400). */
export const Uuid = z.string().regex(UUID, 'must be a UUID').transform(s => s.toLowerCase()).meta({ description: 'public UUID', examples: ['0193a1f2-7c4e-7a10-9b2c-3d4e5f607182'] })
export const UuidParams = z.object({ uuid: Uuid })

/** An RFC 3339 timestamp in UTC. */
export const Timestamp = z.string().meta({ format: 'date-time', examples: ['2026-11-23T10:00:00.000Z'] })

/** Interface section 8: `limit` defaults to 20 and is capped at 96; `offset` defaults to 0. */
export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 96

/**
 * How an integer query parameter reads in the document: `type: integer` (a generated client
 * sends `limit: 5`), while the query string is still checked as digits (no `1e3`, no sign).
 */
export const asInteger = (min: number, description: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ type: 'integer', minimum: min, pattern: undefined, description, ...extra })

const integer = (min: number, maxDigits: number, description: string) => z.string().regex(new RegExp(`^\\d{1,${maxDigits}}$`), maxDigits > 9 ? 'must be a non-negative integer' : `must be a non-negative integer of at most ${maxDigits} digits`)
  .transform(v => Math.min(Number(v), 1e9))
  .pipe(z.number().int().min(min))
  .meta(asInteger(min, description, maxDigits <= 9 ? { maximum: 10 ** maxDigits - 1 } : {}))

/**
 * `limit` and `offset` (interface section 8): a huge `limit` is lowered to 96, a `limit`
 * below 1, a non-integer, or an `offset` of more than 9 digits is a 400.
 */
export const PageQuery = z.object({
  limit: integer(1, 400, 'page size, default 20, at most 96 (larger values are lowered)').optional().transform(v => Math.min(v ?? DEFAULT_LIMIT, MAX_LIMIT)),
  offset: integer(0, 9, 'items to skip, default 0').optional().transform(v => v ?? 0)
})

/**
 * `wait` (interface "Answers without polling"): seconds, 0 to 30 (default 0), that a read
 * of a job or a batch may wait for it to end before it answers.
 */
export const WaitQuery = z.object({
  wait: z.coerce.number().int().min(0).max(30).default(0).meta({ description: 'seconds (0–30, default 0) to wait for the job or batch to end before answering: the answer comes as soon as it ends, or with its state when the wait is over' })
})

/** The paginated list shape of ARCHITECTURE.md: `{ items, total, limit, offset }`. */
export function Paginated<T extends z.ZodType> (item: T) {
  return z.object({ items: z.array(item), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
}

/** An empty answer (204). */
export const NoContent = z.undefined().meta({ description: 'No content' })
