import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { submitJob, MAX_EMAIL_INPUT } from '../../flows/job-submission/submit-job.ts'
import { CHECK_NAMES } from '../../domain/checks.ts'
import { getJob, type JobDoc } from '../../projections/jobs.ts'
import { environmentOf, principalOf, type Principal } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import {
  BODY_PROBLEMS,
  CheckNameSchema,
  CheckOutcomeSchema,
  FlagSchema,
  ReasonSchema,
  Timestamp,
  UuidParams,
  VerdictSchema,
  WaitQuery,
  json,
  problems
} from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The engine's answer for one address (VERIFICATION.md "Result of one address"), as a job shows it. */
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

/** A verification job (interface section 2: uuid, status, score, verdict, created_at, per-check detail). */
export const Job = z
  .object({
    uuid: z.string(),
    status: z.enum(['queued', 'deferred', 'completed', 'failed']),
    email: z.string(),
    verdict: VerdictSchema.nullable(),
    reason: ReasonSchema.nullable(),
    score: z.number().nullable(),
    checks: z.array(CheckNameSchema),
    cost: z.number().meta({ description: 'tokens reserved (0 for test keys)' }),
    environment: z.enum(['live', 'test']),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    attempts: z.number().meta({ description: 'greylisting retries so far' }),
    retry_at: Timestamp.nullable(),
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
        environment: 'live',
        created_at: '2026-11-23T10:00:00.000Z',
        completed_at: '2026-11-23T10:00:01.240Z',
        attempts: 0,
        retry_at: null,
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
        environment: 'live',
        created_at: '2026-11-23T10:00:00.000Z',
        completed_at: null,
        attempts: 0,
        retry_at: null,
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

/** The header that says a read's `?wait=` was not honoured, and why (`account_limit`, `service_limit`). */
const WAIT_REFUSED_HEADER = 'wait-refused'

/**
 * A read of `owner`'s job or batch `id` that waits `seconds` for `done` (interface "Answers
 * without polling"), woken by the read models, ended early when the client goes away. Past
 * the caps on waiting reads (per account, per process: `WAITS_PER_ACCOUNT`,
 * `WAITS_PER_PROCESS`) it is answered at once with what it read, as `wait=0` would be, and
 * the answer carries `Wait-Refused: account_limit` or `service_limit`.
 */
export async function waitedRead<T>(
  rt: HttpRuntime,
  reply: FastifyReply,
  owner: string,
  id: string,
  seconds: number,
  read: () => Promise<T>,
  done: (value: T) => boolean
): Promise<T> {
  if (rt.waits === null || seconds === 0) return await read()
  const { value, refused } = await rt.waits.until(owner, id, seconds * 1000, read, done, clientGone(reply))
  if (refused !== null) reply.header(WAIT_REFUSED_HEADER, refused)
  return value
}

/**
 * An AbortSignal that fires when the client of `reply` goes away before its answer is sent
 * (a waiting read then stops); the listener goes with the answer (keep-alive sockets carry
 * many requests).
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  const res = reply.raw
  const gone = (): void => {
    if (!res.writableFinished) controller.abort()
  }
  res.once('close', gone)
  return controller.signal
}

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
    environment: j.environment,
    created_at: j.created_at,
    completed_at: j.completed_at,
    attempts: j.attempts,
    retry_at: j.retry_at,
    error: j.error,
    result: j.result as JobView['result']
  }
}

const SubmitJob = z
  .object({
    email: z.string().max(MAX_EMAIL_INPUT).meta({ description: 'any text: an address that is not one completes `invalid`/`invalid_syntax`' }),
    checks: z
      .array(z.string())
      .min(1)
      .max(32)
      .optional()
      .meta({ description: `checks to run (their dependencies are added); all when omitted: ${CHECK_NAMES.join(', ')}` })
  })
  .meta({ examples: [{ email: 'jane@example.com' }, { email: 'jane@example.com', checks: ['smtp'] }] })

const SubmitHeaders = z.looseObject({
  'idempotency-key': z.string().optional().meta({ description: 'replays answer 200 with the original job for 24 h (1 to 255 visible ASCII characters)' })
})

/**
 * The `Idempotency-Key` header (Stripe's convention; the interface leaves the mechanism
 * open): 1 to 255 visible ASCII characters. Absent: null.
 * @throws HttpProblem 400 `submit_job.invalid_idempotency_key`.
 */
function idempotencyKey(request: FastifyRequest): string | null {
  const value = request.headers['idempotency-key']
  if (value === undefined) return null
  if (typeof value !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(value))
    throw new HttpProblem(400, 'submit_job.invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters')
  return value
}

/** Verification jobs (interface section 4, "Verification jobs"). */
export function verifyRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  app.route({
    method: 'POST',
    url: '/api/verify',
    config: { auth: 'any', scope: 'email:verify:single', invalid: 'submit_job.invalid_request' },
    schema: {
      operationId: 'submitJob',
      summary: 'Verify one address (a job: 202 queued, then poll or get a webhook)',
      tags: ['Verification jobs'],
      headers: SubmitHeaders,
      body: SubmitJob,
      response: {
        202: json(Job, 'Accepted and queued; `Location` names the job'),
        200: json(Job, 'A replay of an earlier submission with the same Idempotency-Key: the original job (`Idempotent-Replayed: true`)'),
        ...problems(...BODY_PROBLEMS, 401, 402, 403, 422, 429)
      }
    },
    // 202 for a new job; 200 with the original job for a replay of the same Idempotency-Key
    // (interface: "200 when the request replays a prior submission"), marked Idempotent-Replayed.
    handler: async (request, reply) => {
      const p = principalOf(request)
      const submitted = await submitJob(rt.ctx, p, { email: request.body.email.trim(), checks: request.body.checks, idempotency_key: idempotencyKey(request) })
      await rt.caughtUp(request, submitted.position)
      const doc = await getJob(rt.ctx, p.user_uuid, environmentOf(p), submitted.job_uuid)
      reply.header('location', `/api/verify/${submitted.job_uuid}`)
      if (submitted.replayed) reply.header('idempotent-replayed', 'true')
      // Read models slower than the bounded wait: the job as it was accepted.
      const view: JobView = doc
        ? jobView(doc)
        : {
            uuid: submitted.job_uuid,
            status: 'queued',
            email: request.body.email.trim(),
            verdict: null,
            reason: null,
            score: null,
            checks: submitted.checks,
            cost: submitted.cost,
            environment: p.environment,
            created_at: new Date().toISOString(),
            completed_at: null,
            attempts: 0,
            retry_at: null,
            error: null,
            result: null
          }
      return reply.code(submitted.replayed ? 200 : 202).send(view)
    }
  })

  app.route({
    method: 'GET',
    url: '/api/verify/:uuid',
    config: { auth: 'any', scope: 'results:read' },
    schema: {
      operationId: 'getVerification',
      summary: 'A job and its result; with `wait`, answered as soon as the job ends (or when the wait is over)',
      tags: ['Verification jobs'],
      params: UuidParams,
      querystring: WaitQuery,
      response: { 200: Job, ...problems(400, 401, 403, 404, 429) }
    },
    handler: async (request, reply) => await ownJob(rt, principalOf(request), request.params.uuid, { seconds: request.query.wait, reply })
  })
}
