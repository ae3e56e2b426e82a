import { z } from 'zod'
import { CHECK_NAMES } from '../domain/checks.ts'
import { CHECK_OUTCOMES, CHECKS, enumDoc, FLAG_NAMES, FLAGS, REASONS, VERDICTS, type Flag } from '../verifier/vocabulary.ts'
import type { Reason, Verdict } from '../verifier/result.ts'
import { keptFileMaxBytes, keptFilesQuotaBytes, type Plan } from '../domain/plans.ts'

/**
 * Schemas shared by the routes (interface sections 4, 7, 8): the problem+json error, path
 * identifiers, pagination, timestamps. Every route declares its params, query, body and
 * each response status with zod; validation, serialization and the OpenAPI document all
 * come from that one declaration (docs/design/architecture.md "HTTP conventions").
 */

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** RFC 9457 problem details with the machine `code` (docs/design/architecture.md "HTTP conventions"). */
export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().meta({ description: 'machine code, `<operation>.<reason>`' }),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'one entry per invalid field' })
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details (application/problem+json); `type` is a page for people saying what the problem means and what to do'
  })

const example = (status: number, code: string, title: string, detail: string, errors?: Array<{ path: string; message: string }>): Record<string, unknown> => ({
  type: `/problems/${code}`,
  title,
  status,
  detail,
  code,
  ...(errors && { errors })
})
/** One problem a status may carry, as an example of its answer (each status its own). */
export const PROBLEM_EXAMPLES: Readonly<Record<number, Record<string, unknown>>> = {
  400: example(400, 'submit_job.invalid_request', 'Bad Request', 'invalid request: email: Required', [{ path: 'email', message: 'Required' }]),
  401: example(401, 'auth.unauthorized', 'Unauthorized', 'missing bearer credential'),
  402: example(402, 'submit_job.insufficient_tokens', 'Payment Required', 'this check costs 10 tokens; the wallet holds 4'),
  403: example(403, 'auth.missing_scope', 'Forbidden', 'this credential lacks the scope results:read'),
  404: example(404, 'job.not_found', 'Not Found', 'no such job'),
  409: example(409, 'add_chunk.intake_closed', 'Conflict', "the batch's intake is closed"),
  410: example(410, 'batch.account_deleted', 'Gone', 'the account was deleted while this request ran: its batches are erased with it'),
  413: example(
    413,
    'create_batch.body_too_large',
    'Content Too Large',
    'this plan accepts at most 1000 addresses per request, in a body of at most 577536 bytes; send a longer list in chunks'
  ),
  415: example(415, 'request.unsupported_media_type', 'Unsupported Media Type', 'Unsupported Media Type: text/plain'),
  422: example(
    422,
    'submit_job.idempotency_key_reused',
    'Unprocessable Content',
    'this Idempotency-Key was used for a different request; use a new key for a new request'
  ),
  429: example(429, 'rate_limit.exceeded', 'Too Many Requests', 'rate limit of 60 requests per window reached; retry in 23 seconds'),
  500: example(500, 'internal_error', 'Internal Server Error', 'an unexpected error occurred; it has been logged'),
  503: example(503, 'store.unreachable', 'Service Unavailable', 'the service cannot reach its database right now; try again in 5 seconds')
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing or invalid credential',
  402: 'Wallet balance too low',
  403: 'Missing scope, or not allowed by the plan',
  404: "Not found (or not the caller's)",
  409: 'Conflict',
  410: 'Gone: the account was deleted meanwhile',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Unprocessable: an Idempotency-Key reused for another request',
  429: 'Too many requests, or temporarily locked',
  500: 'Unexpected error',
  503: 'Unavailable: the database does not answer (try again after `Retry-After`), or as the operation says'
}

/** A JSON answer with its description, as a route declares it for one status. */
export function json<T extends z.ZodType>(schema: T, description: string): { description: string; content: { 'application/json': { schema: T } } } {
  return { description, content: { 'application/json': { schema } } }
}

/** A problem+json answer, as a route declares it for one status. */
export interface ProblemResponse {
  description: string
  content: { 'application/problem+json': { schema: typeof Problem; example?: Record<string, unknown> } }
}

/**
 * The problem+json answers of `statuses`, plus those any operation may answer: 500, and 503
 * (the database does not answer, or the process is shutting down); each with an example of its own status.
 */
export function problems(...statuses: number[]): Record<number, ProblemResponse> {
  const out: Record<number, ProblemResponse> = {}
  for (const s of [...statuses, 500, 503])
    out[s] = {
      description: STATUS_TEXT[s] ?? 'Error',
      content: { 'application/problem+json': { schema: Problem, ...(PROBLEM_EXAMPLES[s] && { example: PROBLEM_EXAMPLES[s] }) } }
    }
  return out
}

/** An address as the account and sign-in routes take it: trimmed, at most 320 characters (RFC 5321 §4.5.3.1: 64 + @ + 255); the commands parse it. */
export const Email = z.string().trim().min(1).max(320)

/** Answers that any operation with a JSON body may also give. */
export const BODY_PROBLEMS = [400, 413, 415] as const

/** A `{uuid}` path parameter: a UUID, any case, read lower-cased (docs/interface.md §2: a malformed one is a 400). */
const Uuid = z
  .string()
  .regex(UUID, 'must be a UUID')
  .transform(s => s.toLowerCase())
  .meta({ description: 'public UUID', examples: ['0193a1f2-7c4e-7a10-9b2c-3d4e5f607182'] })
export const UuidParams = z.object({ uuid: Uuid })

/** An RFC 3339 timestamp in UTC. */
export const Timestamp = z.string().meta({ format: 'date-time', examples: ['2026-11-23T10:00:00.000Z'] })

/** Interface section 8: `limit` defaults to 20 and is capped at 96; `offset` defaults to 0. */
const DEFAULT_LIMIT = 20
const MAX_LIMIT = 96

/**
 * How an integer query parameter reads in the document: `type: integer` (a generated client
 * sends `limit: 5`), while the query string is still checked as digits (no `1e3`, no sign).
 */
export const asInteger = (min: number, description: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'integer',
  minimum: min,
  pattern: undefined,
  description,
  ...extra
})

const integer = (min: number, maxDigits: number, description: string) =>
  z
    .string()
    .regex(
      new RegExp(`^\\d{1,${maxDigits}}$`),
      maxDigits > 9 ? 'must be a non-negative integer' : `must be a non-negative integer of at most ${maxDigits} digits`
    )
    .transform(v => Math.min(Number(v), 1e9))
    .pipe(z.number().int().min(min))
    .meta(asInteger(min, description, maxDigits <= 9 ? { maximum: 10 ** maxDigits - 1 } : {}))

/**
 * `limit` and `offset` (docs/interface.md §8): a huge `limit` is lowered to 96, a `limit`
 * below 1, a non-integer, or an `offset` of more than 9 digits is a 400.
 */
export const PageQuery = z.object({
  limit: integer(1, 400, 'page size, default 20, at most 96 (larger values are lowered)')
    .optional()
    .transform(v => Math.min(v ?? DEFAULT_LIMIT, MAX_LIMIT)),
  offset: integer(0, 9, 'items to skip, default 0')
    .optional()
    .transform(v => v ?? 0)
})

/**
 * `formula_escape` on a CSV download (issue 42, item 6): `true` (the default) neutralises
 * text cells a spreadsheet would run as formulas (`'` before a leading `=` `+` `-` `@`, tab or
 * CR, the cell quoted; plain numbers stay as they are); `false` writes every cell exactly as
 * it is, for a program that reads the file rather than a spreadsheet. XLSX is never changed.
 */
export const FormulaEscape = z.enum(['true', 'false']).optional().meta({
  description:
    "CSV only: `true` (default) writes a text cell that starts with `=`, `+`, `-`, `@`, a tab or a CR (and isn't a plain number) with a leading `'`, quoted, so that a spreadsheet shows it as text instead of running it (OWASP CSV Injection); `false` writes every cell as it is, for programs"
})

/**
 * `environment` of a list (issue 42 item 10): `live` or `test`. A session sees both
 * environments and may name one; a key, agent or OAuth client sees its own only (naming
 * the other is a 400 `<operation>.other_environment`).
 */
/** A comma-separated list of known values, OR-ed (interface `GET /api/jobs`; a segment of a batch's results). */
export const listOf = <T extends string>(values: readonly T[], what: string) =>
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

/** The environment a write acts in (`environment` in a submission's body): see `actingIn`. */
export const ActingEnvironment = z.enum(['live', 'test'], { message: 'environment must be live or test' }).optional().meta({
  description:
    "`test` runs in the sandbox (simulated answers, no tokens, no mail server asked), `live` for real. A session (the console's test mode) chooses, live when it names none; an API key, agent or OAuth client acts in its own environment only, and naming the other is a 400 `<operation>.other_environment`"
})

export const EnvironmentQuery = z.object({
  environment: z.enum(['live', 'test'], { message: 'environment must be live or test' }).optional().meta({
    description:
      "`live` or `test`: a session's list shows both environments unless it names one; an API key's shows its own environment only (an agent's or OAuth client's the live one), and naming the other is a 400"
  })
})

/**
 * `wait` (interface "Answers without polling"): seconds, 0 to 30 (default 0), that a read
 * of a job or a batch may wait for it to end before it answers.
 */
export const WaitQuery = z.object({
  wait: z.coerce.number().int().min(0).max(30).default(0).meta({
    description:
      'seconds (0–30, default 0) to wait for the job or batch to end before answering: the answer comes as soon as it ends, or with its state when the wait is over'
  })
})

/** The paginated list shape of docs/design/architecture.md: `{ items, total, limit, offset }`. */
export function Paginated<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
}

/** An empty answer (204). */
export const NoContent = z.undefined().meta({ description: 'No content' })

// ── The vocabulary of results ────────────────────

/** A deliverability verdict, each value with what it means and what a sender should do. */
export const VerdictSchema = z
  .enum(Object.keys(VERDICTS) as [Verdict, ...Verdict[]])
  .meta({ id: 'Verdict', ...enumDoc('The deliverability verdict.', VERDICTS) })
/** The primary reason of a verdict. */
export const ReasonSchema = z.enum(Object.keys(REASONS) as [Reason, ...Reason[]]).meta({
  id: 'Reason',
  ...enumDoc(
    'Why the verdict is what it is (each reason belongs to one verdict).',
    Object.fromEntries(Object.entries(REASONS).map(([k, t]) => [k, { ...t, meaning: `(${t.verdict}) ${t.meaning}` }]))
  )
})
/** A flag beside the reason. */
export const FlagSchema = z.enum(FLAG_NAMES as [Flag, ...Flag[]]).meta({ id: 'Flag', ...enumDoc('What else is known of the address.', FLAGS) })
/** A check's name. */
export const CheckNameSchema = z
  .enum(CHECK_NAMES)
  .meta({ id: 'CheckName', ...enumDoc('A check (each selectable per request; its cost in tokens is in `GET /api/config`).', CHECKS) })
/** What a check found. */
export const CheckOutcomeSchema = z
  .enum(Object.keys(CHECK_OUTCOMES) as [keyof typeof CHECK_OUTCOMES])
  .meta({ id: 'CheckOutcome', ...enumDoc('What the check found.', CHECK_OUTCOMES) })

/** A plan's caps as the API shows them (`GET /api/config` per plan, `GET /api/subscription` for the caller's). */
export const PlanLimits = z.object({
  api_keys: z.number(),
  agents: z.number(),
  webhooks: z.number(),
  max_batch_size: z.number().meta({ description: 'unique valid addresses per batch, cumulative across chunks' }),
  max_chunk_size: z.number().meta({ description: 'addresses per request of a batch chunk' }),
  rate_limit_per_minute: z.number().meta({ description: 'requests per minute of each API key and agent token' }),
  kept_file_bytes: z.number().meta({ description: 'bytes one list file kept beside its batch may hold' }),
  kept_files_bytes: z.number().meta({ description: 'bytes of list files an account may keep at once, test batches included' })
})

/** The caps of `plan` (see `PlanLimits`). */
export const planLimits = (plan: Plan): z.infer<typeof PlanLimits> => ({
  api_keys: plan.max_api_keys,
  agents: plan.max_agents,
  webhooks: plan.max_webhooks,
  max_batch_size: plan.max_batch_size,
  max_chunk_size: plan.max_chunk_size,
  rate_limit_per_minute: plan.rate_limit_per_minute,
  kept_file_bytes: keptFileMaxBytes(plan),
  kept_files_bytes: keptFilesQuotaBytes(plan)
})
