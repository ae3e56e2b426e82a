import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { checkRegistration, completeRegistration } from '../../commands/user/register-user.ts'
import { screenForSignUp } from '../../commands/user/screen-sign-up.ts'
import { parseAddress } from '../../verifier/syntax.ts'
import { confirmAccount } from '../../commands/user/confirm-account.ts'
import { completeTwoFactor } from '../../commands/session/complete-two-factor.ts'
import { login } from '../../commands/session/login.ts'
import { verifyEmailChange } from '../../commands/user/verify-email-change.ts'
import type { ClientSeen, SignedIn } from '../../commands/session/start-session.ts'
import { parseRefreshToken, refreshSession } from '../../commands/session/refresh-session.ts'
import { revokeSession } from '../../commands/session/revoke-session.ts'
import { forgotPassword } from '../../commands/user/forgot-password.ts'
import { resendConfirmation } from '../../commands/user/resend-confirmation.ts'
import { resetPassword } from '../../commands/user/reset-password.ts'
import { HttpProblem } from '../problem.ts'
import { BODY_PROBLEMS, NoContent, json, problems } from '../schemas.ts'
import { FailureThrottle, signInThrottleOf } from '../plugins/throttle.ts'
import { AfterAnswer } from '../after-answer.ts'
import { DomainError } from '../../domain/shared.ts'
import type { HttpRuntime } from '../runtime.ts'
import { secureCookie } from '../cookies.ts'

const Email = z.string().trim().min(1).max(320)

/** The `svc_refresh` cookie: HttpOnly, SameSite=Strict, Secure except on plain local HTTP. */
function setRefreshCookie(request: FastifyRequest, reply: FastifyReply, s: SignedIn): void {
  reply.setCookie('svc_refresh', s.refresh_token, {
    httpOnly: true,
    sameSite: 'strict',
    secure: secureCookie(request),
    path: '/api/auth',
    expires: s.refresh_expires_at
  })
}

/** Where a sign-in comes from (user agent and address), for the session's client. */
const clientSeen = (request: FastifyRequest): ClientSeen => ({ user_agent: request.headers['user-agent'] ?? null, ip: request.ip })

/** A signed-in answer: an access token (the refresh token goes in the `svc_refresh` cookie). */
const Authenticated = z
  .object({
    access_token: z.string().meta({ description: 'EdDSA JWT; send as `Authorization: Bearer …`' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().meta({ description: 'seconds' })
  })
  .meta({ id: 'Authenticated' })

function signedInBody(s: SignedIn): { access_token: string; token_type: 'Bearer'; expires_in: number } {
  return { access_token: s.access_token, token_type: s.token_type, expires_in: s.expires_in }
}

/**
 * A sign-in replaces the session the browser holds: the one its `svc_refresh` cookie names
 * ends (ASVS 5.0 V7.2.4), when the cookie carries that session's current refresh token
 * (its id alone ends nothing). Nothing happens without a cookie or for an unknown one.
 * @returns the global position of the revocation (0 when there was none).
 */
async function endReplacedSession(rt: HttpRuntime, request: FastifyRequest): Promise<number> {
  const parsed = request.cookies.svc_refresh ? parseRefreshToken(request.cookies.svc_refresh) : null
  if (!parsed) return 0
  return await revokeSession(rt.ctx, parsed.session_uuid, 'logout', undefined, parsed.secret).catch(err => {
    if (err instanceof DomainError) return 0
    throw err
  })
}

/** Authentication and sign-in (interface section 4). Public routes; refresh and logout read the `svc_refresh` cookie. */
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
      const s = await screenForSignUp(rt.ctx, parsed.normalized)
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
        await completeRegistration(rt.ctx, { ...request.body, email })
      })
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/confirm',
    config: { auth: 'none', invalid: 'confirm_account.invalid_request' },
    schema: {
      operationId: 'confirm',
      summary: 'Confirm the address with its six-digit code; signs in',
      tags,
      body: z.object({ email: Email, code: z.string().trim().max(32) }),
      response: { 200: json(Authenticated, 'Signed in; the `svc_refresh` cookie is set'), ...problems(...BODY_PROBLEMS, 401) }
    },
    handler: async (request, reply) => {
      const s = await confirmAccount(rt.ctx, request.body, clientSeen(request))
      await rt.caughtUp(Math.max(s.position, await endReplacedSession(rt, request)))
      setRefreshCookie(request, reply, s)
      return reply.code(200).send(signedInBody(s))
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
      await rt.caughtUp(await verifyEmailChange(rt.ctx, request.body.token))
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/refresh',
    config: { auth: 'none' },
    schema: {
      operationId: 'refresh',
      summary: 'A new access token from the `svc_refresh` cookie (rotated); `null` without a cookie',
      tags,
      response: { 200: json(Authenticated.nullable(), 'Signed in with fresh cookies, or `null` when no cookie was sent'), ...problems(401) }
    },
    handler: async (request, reply) => {
      const cookie = request.cookies.svc_refresh
      if (!cookie) return reply.code(200).send(null)
      try {
        const s = await refreshSession(rt.ctx, cookie)
        await rt.caughtUp(s.position)
        setRefreshCookie(request, reply, s)
        return reply.code(200).send(signedInBody(s))
      } catch (err) {
        reply.clearCookie('svc_refresh', { path: '/api/auth' })
        throw err
      }
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/logout',
    config: { auth: 'none' },
    schema: {
      operationId: 'logout',
      summary: "Revoke the `svc_refresh` cookie's session and clear the cookies (idempotent)",
      tags,
      response: { 204: NoContent, ...problems() }
    },
    handler: async (request, reply) => {
      const parsed = request.cookies.svc_refresh ? parseRefreshToken(request.cookies.svc_refresh) : null
      if (parsed) {
        // Idempotent: an unknown or already revoked session is simply logged out.
        // Only the holder of the session's current refresh token signs it out (its id alone does not).
        const position = await revokeSession(rt.ctx, parsed.session_uuid, 'logout', undefined, parsed.secret).catch(err => {
          if (err instanceof DomainError && err.code === 'revoke_session.not_found') return 0
          throw err
        })
        await rt.caughtUp(position)
      }
      reply.clearCookie('svc_refresh', { path: '/api/auth' })
      return reply.code(204).send()
    }
  })

  // Per client: 20 failed sign-ins in 15 minutes, then 429 until the window moves on.
  const loginThrottle = signInThrottleOf(rt)
  app.route({
    method: 'POST',
    url: '/api/auth/login',
    config: { auth: 'none', invalid: 'login.invalid_request' },
    schema: {
      operationId: 'login',
      summary: 'Sign in with email and password; with two-factor on, a challenge for /api/auth/2fa/verify',
      tags,
      body: z.object({ email: Email, password: z.string().max(4096) }),
      response: {
        200: json(
          z.union([
            Authenticated,
            z.object({ two_factor_required: z.literal(true), temp_token: z.string().meta({ description: 'for /api/auth/2fa/verify, 5 minutes' }) })
          ]),
          'Signed in, or a two-factor challenge'
        ),
        ...problems(...BODY_PROBLEMS, 401, 403, 429)
      }
    },
    handler: async (request, reply) => {
      // Counted before it is judged (a burst of guesses from one client is bounded too).
      loginThrottle.attempt(request.ip)
      const s = await login(rt.ctx, request.body, clientSeen(request)).catch(err => {
        if (!(err instanceof DomainError && err.kind === 'unauthorized')) loginThrottle.succeeded(request.ip)
        throw err
      })
      loginThrottle.succeeded(request.ip)
      if ('two_factor_required' in s) return reply.code(200).send(s)
      await rt.caughtUp(Math.max(s.position, await endReplacedSession(rt, request)))
      setRefreshCookie(request, reply, s)
      return reply.code(200).send(signedInBody(s))
    }
  })

  app.route({
    method: 'POST',
    url: '/api/auth/2fa/verify',
    config: { auth: 'none', invalid: 'verify_2fa.invalid_request' },
    schema: {
      operationId: 'verifyTwoFactor',
      summary: 'Complete a sign-in with the challenge token and a TOTP or backup code',
      tags,
      body: z.object({ temp_token: z.string().max(2048), code: z.string().max(64) }),
      response: { 200: json(Authenticated, 'Signed in'), ...problems(...BODY_PROBLEMS, 401, 429) }
    },
    handler: async (request, reply) => {
      const s = await completeTwoFactor(rt.ctx, request.body.temp_token, request.body.code, clientSeen(request))
      await rt.caughtUp(Math.max(s.position, await endReplacedSession(rt, request)))
      setRefreshCookie(request, reply, s)
      return reply.code(200).send(signedInBody(s))
    }
  })
}
