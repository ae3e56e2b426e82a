import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { submitJob, MAX_EMAIL_INPUT } from '../../flows/job-submission/submit-job.ts'
import { CHECK_NAMES } from '../../domain/checks.ts'
import { getJob } from '../../projections/jobs.ts'
import { actingIn, environmentOf, principalOf } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { ActingEnvironment, BODY_PROBLEMS, UuidParams, WaitQuery, json, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'
import { Job, jobView, ownJob, type JobView } from './jobs.ts'

const SubmitJob = z
  .object({
    email: z.string().max(MAX_EMAIL_INPUT).meta({ description: 'any text: an address that is not one completes `invalid`/`invalid_syntax`' }),
    checks: z
      .array(z.string())
      .min(1)
      .max(32)
      .optional()
      .meta({ description: `checks to run (their dependencies are added); all when omitted: ${CHECK_NAMES.join(', ')}` }),
    environment: ActingEnvironment
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

/** Verification jobs (docs/interface.md §4, "Verification jobs"). */
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
      const p = actingIn(principalOf(request), request.body.environment, 'submit_job')
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
            charged: null,
            environment: p.environment,
            created_at: new Date().toISOString(),
            completed_at: null,
            attempts: 0,
            retry_at: null,
            deferral: null,
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
