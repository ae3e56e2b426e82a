import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { registerUser, screenForSignUp } from '../../commands/register-user.ts'
import { parseAddress } from '../../verifier/syntax.ts'
import { confirmAccount } from '../../commands/confirm-account.ts'
import { completeTwoFactor, login } from '../../commands/login.ts'
import { verifyEmailChange } from '../../commands/change-email.ts'
import type { SignedIn } from '../../commands/start-session.ts'
import { parseRefreshToken, refreshSession, revokeSession } from '../../commands/refresh-session.ts'
import { forgotPassword, resendConfirmation, resetPassword } from '../../commands/account-recovery.ts'
import { HttpProblem, parseWith } from '../problem.ts'
import { FailureThrottle } from '../plugins/throttle.ts'
import { DomainError } from '../../domain/shared.ts'
import type { HttpRuntime } from '../runtime.ts'

const Email = z.string().trim().min(1).max(320)

/** The `svc_refresh` cookie: HttpOnly, SameSite=Strict, Secure except on plain local HTTP. */
export function setRefreshCookie (request: FastifyRequest, reply: FastifyReply, s: SignedIn): void {
  const local = request.protocol === 'http' && /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(request.host)
  reply.setCookie('svc_refresh', s.refresh_token, { httpOnly: true, sameSite: 'strict', secure: !local, path: '/api/auth', expires: s.refresh_expires_at })
}

function signedInBody (s: SignedIn): { access_token: string, token_type: 'Bearer', expires_in: number } {
  return { access_token: s.access_token, token_type: s.token_type, expires_in: s.expires_in }
}

/** Authentication and sign-in (interface section 4). */
export function authRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  // Per client: 30 previews and registrations an hour (each runs DNS and SMTP checks).
  const signUpAllowance = new FailureThrottle({ limit: 30, window_ms: 60 * 60_000, code: 'signup_preview.too_many_requests' })

  app.post('/api/auth/signup-preview', async request => {
    const body = parseWith(z.object({ email: Email }), request.body, 'signup_preview.invalid_email')
    const parsed = parseAddress(body.email)
    if (!parsed.ok) throw new HttpProblem(400, 'signup_preview.invalid_email', `invalid email: ${parsed.detail}`)
    signUpAllowance.check(request.ip)
    signUpAllowance.fail(request.ip)
    const s = await screenForSignUp(rt.ctx, parsed.normalized)
    return { email: body.email, normalized: parsed.normalized, may_sign_up: s.may_sign_up, refusal: s.refusal, verdict: s.verdict, reason: s.reason, did_you_mean: s.did_you_mean, checks: s.checks }
  })

  app.post('/api/auth/register', async (request, reply) => {
    const body = parseWith(z.object({ email: Email, password: z.string().max(4096), locale: z.string().max(35) }), request.body, 'register_user.invalid_request')
    signUpAllowance.fail(request.ip)
    await registerUser(rt.ctx, body)
    return reply.code(204).send()
  })

  app.post('/api/auth/confirm', async (request, reply) => {
    const body = parseWith(z.object({ email: Email, code: z.string().trim().max(32) }), request.body, 'confirm_account.invalid_request')
    const s = await confirmAccount(rt.ctx, body)
    await rt.caughtUp(s.position)
    setRefreshCookie(request, reply, s)
    return reply.code(200).send(signedInBody(s))
  })

  app.post('/api/auth/resend-confirmation', async (request, reply) => {
    const body = parseWith(z.object({ email: Email }), request.body, 'resend_confirmation.invalid_email')
    await resendConfirmation(rt.ctx, body.email)
    return reply.code(204).send()
  })

  app.post('/api/auth/forgot-password', async (request, reply) => {
    const body = parseWith(z.object({ email: Email }), request.body, 'forgot_password.invalid_email')
    await forgotPassword(rt.ctx, body.email)
    return reply.code(204).send()
  })

  app.post('/api/auth/reset-password', async (request, reply) => {
    const body = parseWith(z.object({ token: z.string().max(200), new_password: z.string().max(4096) }), request.body, 'reset_password.invalid_request')
    await resetPassword(rt.ctx, body.token, body.new_password)
    return reply.code(204).send()
  })

  app.post('/api/auth/verify-email-change', async (request, reply) => {
    const body = parseWith(z.object({ token: z.string().max(200) }), request.body, 'verify_email_change.invalid_request')
    await rt.caughtUp(await verifyEmailChange(rt.ctx, body.token))
    return reply.code(204).send()
  })

  app.post('/api/auth/refresh', async (request, reply) => {
    const cookie = request.cookies.svc_refresh
    if (!cookie) return reply.code(200).type('application/json').send('null')
    try {
      const s = await refreshSession(rt.ctx, cookie)
      await rt.caughtUp(s.position)
      setRefreshCookie(request, reply, s)
      return reply.code(200).send(signedInBody(s))
    } catch (err) {
      reply.clearCookie('svc_refresh', { path: '/api/auth' })
      throw err
    }
  })

  app.post('/api/auth/logout', async (request, reply) => {
    const parsed = request.cookies.svc_refresh ? parseRefreshToken(request.cookies.svc_refresh) : null
    if (parsed) {
      // Idempotent: an unknown or already revoked session is simply logged out.
      const position = await revokeSession(rt.ctx, parsed.session_uuid, 'logout').catch(err => {
        if (err instanceof DomainError && err.code === 'revoke_session.not_found') return 0
        throw err
      })
      await rt.caughtUp(position)
    }
    reply.clearCookie('svc_refresh', { path: '/api/auth' })
    return reply.code(204).send()
  })

  // Per client: 20 failed sign-ins in 15 minutes, then 429 until the window moves on.
  const loginThrottle = new FailureThrottle({ limit: 20, window_ms: 15 * 60_000, code: 'login.too_many_attempts' })
  app.post('/api/auth/login', async (request, reply) => {
    const body = parseWith(z.object({ email: Email, password: z.string().max(4096) }), request.body, 'login.invalid_request')
    loginThrottle.check(request.ip)
    const s = await login(rt.ctx, body).catch(err => {
      if (err instanceof DomainError && err.kind === 'unauthorized') loginThrottle.fail(request.ip)
      throw err
    })
    if ('two_factor_required' in s) return reply.code(200).send(s)
    await rt.caughtUp(s.position)
    setRefreshCookie(request, reply, s)
    return reply.code(200).send(signedInBody(s))
  })

  app.post('/api/auth/2fa/verify', async (request, reply) => {
    const body = parseWith(z.object({ temp_token: z.string().max(2048), code: z.string().max(64) }), request.body, 'verify_2fa.invalid_request')
    const s = await completeTwoFactor(rt.ctx, body.temp_token, body.code)
    await rt.caughtUp(s.position)
    setRefreshCookie(request, reply, s)
    return reply.code(200).send(signedInBody(s))
  })
}
