import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { submitJob, MAX_EMAIL_INPUT } from '../../commands/submit-job.ts'
import type { JobDoc } from '../../projections/jobs.ts'
import { authenticate, requireScope } from '../plugins/auth.ts'
import { HttpProblem, parseUuid, parseWith } from '../problem.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The public view of a job. */
export function jobView (j: JobDoc): Record<string, unknown> {
  return {
    uuid: j.uuid,
    status: j.status,
    email: j.email,
    verdict: j.verdict,
    reason: j.reason,
    score: j.score,
    checks: j.checks,
    cost: j.cost,
    environment: j.environment,
    created_at: j.created_at,
    completed_at: j.completed_at,
    attempts: j.attempts,
    retry_at: j.retry_at,
    error: j.error,
    result: j.result
  }
}

const SubmitJob = z.object({
  email: z.string().max(MAX_EMAIL_INPUT),
  checks: z.array(z.string()).min(1).max(32).optional()
})

/**
 * The `Idempotency-Key` header (Stripe's convention; the interface leaves the mechanism
 * open): 1 to 255 visible ASCII characters. Absent: null.
 * @throws HttpProblem 400 `submit_job.invalid_idempotency_key`.
 */
function idempotencyKey (request: FastifyRequest): string | null {
  const value = request.headers['idempotency-key']
  if (value === undefined) return null
  if (typeof value !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(value)) throw new HttpProblem(400, 'submit_job.invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters')
  return value
}

/** Verification jobs (interface section 4, "Verification jobs"). */
export function verifyRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  // 202 for a new job; 200 with the original job for a replay of the same Idempotency-Key
  // (interface: "200 when the request replays a prior submission"), marked Idempotent-Replayed.
  app.post('/api/verify', async (request, reply) => {
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'email:verify:single')
    const body = parseWith(SubmitJob, request.body, 'submit_job.invalid_request')
    const key = idempotencyKey(request)
    const submitted = await submitJob(rt.ctx, p, { email: body.email.trim(), checks: body.checks, idempotency_key: key })
    await rt.caughtUp(submitted.position)
    const doc = await rt.ctx.reads.collection<JobDoc>('jobs').get(submitted.job_uuid)
    reply.header('location', `/api/verify/${submitted.job_uuid}`)
    if (submitted.replayed) reply.header('idempotent-replayed', 'true')
    return reply.code(submitted.replayed ? 200 : 202).send(doc ? jobView(doc) : { uuid: submitted.job_uuid, status: 'queued' })
  })

  const getJob = async (request: FastifyRequest): Promise<Record<string, unknown>> => {
    const uuid = parseUuid((request.params as { uuid?: string }).uuid)
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'results:read')
    const doc = await rt.ctx.reads.collection<JobDoc>('jobs').get(uuid)
    if (!doc || doc.user_uuid !== p.user_uuid) throw new HttpProblem(404, 'job.not_found', 'no such job')
    return jobView(doc)
  }
  app.get('/api/verify/:uuid', getJob)
  app.get('/api/jobs/:uuid', getJob)
}
