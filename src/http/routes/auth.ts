import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { checkRegistration, registerUser } from '../../commands/user/register-user.ts'
import { signupPreview } from '../../commands/user/signup-preview.ts'
import { parseAddress } from '../../verifier/syntax.ts'
import { verifyEmailChange } from '../../flows/email-change/verify-email-change.ts'
import { forgotPassword } from '../../commands/user/forgot-password.ts'
import { resendConfirmation } from '../../commands/user/resend-confirmation.ts'
import { resetPassword } from '../../flows/revoke-sessions/reset-password.ts'
import { HttpProblem } from '../problem.ts'
import { BODY_PROBLEMS, Email, NoContent, problems } from '../schemas.ts'
import { FailureThrottle } from '../plugins/throttle.ts'
import { AfterAnswer } from '../after-answer.ts'
import type { HttpRuntime } from '../runtime.ts'

/**
 * Accounts before a session (docs/interface.md §4): the sign-up preview and registration,
 * the confirmation code mailed again, the forgotten password and its reset, and the switch
 * to a new address. Public routes. The sign-in session's routes, confirmation among them,
 * are in sign-in.ts.
 */
export function authRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Authentication']
  // The account-dependent work of the three "same 204" operations runs after their answer.
  const after = new AfterAnswer()
  fastify.addHook('onClose', async () => {
    await after.drain()
  })
  // Per client: 30 previews and registrations an hour (each runs DNS and SMTP checks).
  const signUpAllowance = new FailureThrottle({ limit: 30, window_ms: 60 * 60_000, code: 'signup_preview.too_many_requests' })
  // Registrations: per client (with the previews above), per address domain and in all, an hour each.
  const perHour = rt.ctx.config.registrations_per_hour
  const registrations = {
    client: new FailureThrottle({ limit: perHour.client, window_ms: 60 * 60_000, code: 'register_user.too_many_requests' }),
    domain: new FailureThrottle({ limit: perHour.domain, window_ms: 60 * 60_000, code: 'register_user.too_many_requests' }),
    all: new FailureThrottle({ limit: perHour.all, window_ms: 60 * 60_000, code: 'register_user.too_many_requests' })
  }

  app.route({
    method: 'POST',
    url: '/api/auth/signup-preview',
    config: { auth: 'none', invalid: 'signup_preview.invalid_email' },
    schema: {
      operationId: 'signupPreview',
      summary: 'Which checks an address passes and whether it may sign up',
      tags,
      body: z.object({ email: Email }),
      response: {
        200: z.object({
          email: z.string(),
          normalized: z.string(),
          may_sign_up: z.boolean(),
          refusal: z.enum(['disposable_email', 'undeliverable_email']).nullable(),
          verdict: z.string().nullable(),
          reason: z.string().nullable(),
          did_you_mean: z.string().nullable(),
          checks: z.array(z.object({ name: z.string(), outcome: z.string() }))
        }),
        ...problems(...BODY_PROBLEMS, 429)
      }
    },
    handler: async request => {
      const parsed = parseAddress(request.body.email)
      if (!parsed.ok) throw new HttpProblem(400, 'signup_preview.invalid_email', `invalid email: ${parsed.detail}`)
      signUpAllowance.check(request.ip)
      signUpAllowance.fail(request.ip)
      const s = await signupPreview(rt.ctx, parsed.normalized)
      return {
        email: request.body.email,
        normalized: parsed.normalized,
        may_sign_up: s.may_sign_up,
        refusal: s.refusal,
        verdict: s.verdict,
        reason: s.reason,
        did_you_mean: s.did_you_mean,
        checks: s.checks
      }
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/register',
    config: { auth: 'none', invalid: 'register_user.invalid_request' },
    schema: {
      operationId: 'register',
      summary: 'Sign up; a confirmation code is mailed (the same 204 whether or not the address existed)',
      tags,
      body: z
        .object({ email: Email, password: z.string().max(4096), locale: z.string().max(35) })
        .meta({ examples: [{ email: 'jane@example.com', password: 'a long passphrase', locale: 'en' }] }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 429) }
    },
    handler: async (request, reply) => {
      const parsed = parseAddress(request.body.email)
      const domain = parsed.ok ? parsed.ascii_domain : '(invalid)'
      registrations.client.check(request.ip)
      registrations.domain.check(domain)
      registrations.all.check('all')
      signUpAllowance.fail(request.ip)
      registrations.client.fail(request.ip)
      registrations.domain.fail(domain)
      registrations.all.fail('all')
      const email = await checkRegistration(rt.ctx, request.body)
      after.run(request.log, 'register', email, async () => {
        await registerUser(rt.ctx, { ...request.body, email })
      })
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/resend-confirmation',
    config: { auth: 'none', invalid: 'resend_confirmation.invalid_email' },
    schema: {
      operationId: 'resendConfirmation',
      summary: 'Mail a new confirmation code (the same 204 in every case)',
      tags,
      body: z.object({ email: Email }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS) }
    },
    handler: async (request, reply) => {
      const parsed = parseAddress(request.body.email)
      if (!parsed.ok) throw new HttpProblem(400, 'resend_confirmation.invalid_email', 'invalid email')
      after.run(request.log, 'resend-confirmation', parsed.normalized, async () => {
        await resendConfirmation(rt.ctx, request.body.email)
      })
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/forgot-password',
    config: { auth: 'none', invalid: 'forgot_password.invalid_email' },
    schema: {
      operationId: 'forgotPassword',
      summary: 'Mail a password reset link (the same 204 whether or not the account exists)',
      tags,
      body: z.object({ email: Email }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS) }
    },
    handler: async (request, reply) => {
      const parsed = parseAddress(request.body.email)
      if (!parsed.ok) throw new HttpProblem(400, 'forgot_password.invalid_email', 'invalid email')
      after.run(request.log, 'forgot-password', parsed.normalized, async () => {
        await forgotPassword(rt.ctx, request.body.email)
      })
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/reset-password',
    config: { auth: 'none', invalid: 'reset_password.invalid_request' },
    schema: {
      operationId: 'resetPassword',
      summary: 'Set a new password with a reset token (every session is signed out)',
      tags,
      body: z.object({ token: z.string().max(200), new_password: z.string().max(4096) }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 401, 404) }
    },
    handler: async (request, reply) => {
      await resetPassword(rt.ctx, request.body.token, request.body.new_password)
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/verify-email-change',
    config: { auth: 'none', invalid: 'verify_email_change.invalid_request' },
    schema: {
      operationId: 'verifyEmailChange',
      summary: 'Switch the account to its new address with the mailed token',
      tags,
      body: z.object({ token: z.string().max(200) }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 401, 409) }
    },
    handler: async (request, reply) => {
      await rt.caughtUp(request, await verifyEmailChange(rt.ctx, request.body.token))
      return reply.code(204).send()
    }
  })
}
