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

/** Verification jobs (interface section 4, "Verification jobs"). */
export function verifyRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  app.post('/api/verify', async (request, reply) => {
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'email:verify:single')
    const body = parseWith(SubmitJob, request.body, 'submit_job.invalid_request')
    const submitted = await submitJob(rt.ctx, p, { email: body.email.trim(), checks: body.checks })
    await rt.caughtUp(submitted.position)
    const doc = await rt.ctx.reads.collection<JobDoc>('jobs').get(submitted.job_uuid)
    reply.header('location', `/api/verify/${submitted.job_uuid}`)
    return reply.code(202).send(doc ? jobView(doc) : { uuid: submitted.job_uuid, status: 'queued' })
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
