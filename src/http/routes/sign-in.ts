import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { confirmAccount } from '../../flows/confirm-account/confirm-account.ts'
import { completeTwoFactor } from '../../flows/sign-in/complete-two-factor.ts'
import { login } from '../../flows/sign-in/login.ts'
import type { ClientSeen, SignedIn } from '../../commands/session/start-session.ts'
import { parseRefreshToken, refresh } from '../../commands/session/refresh.ts'
import { revokeSession } from '../../commands/session/revoke-session.ts'
import { BODY_PROBLEMS, Email, NoContent, json, problems } from '../schemas.ts'
import { signInThrottleOf } from '../plugins/throttle.ts'
import { DomainError } from '../../domain/shared.ts'
import type { HttpRuntime } from '../runtime.ts'
import { secureCookie } from '../cookies.ts'

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

/** The body of a signed-in answer: the access token and its lifetime (the refresh token goes in the cookie, never in a body). */
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

/**
 * A sign-in's answer (confirmation, password, second factor): the session the browser held
 * ends (endReplacedSession), the reads wait for both, the refresh token goes in the
 * `svc_refresh` cookie and the access token in the body (200).
 */
async function answerSignIn(rt: HttpRuntime, request: FastifyRequest, reply: FastifyReply, s: SignedIn): Promise<FastifyReply> {
  await rt.caughtUp(request, Math.max(s.position, await endReplacedSession(rt, request)))
  setRefreshCookie(request, reply, s)
  return reply.code(200).send(signedInBody(s))
}

/**
 * The sign-in session's routes (docs/interface.md §4): every way in (confirmation of a new
 * account, password, the second factor), the refresh that rotates the session's token, and
 * logout. Each sign-in ends the session the browser's `svc_refresh` cookie held. Public routes;
 * refresh and logout read that cookie.
 */
export function signInRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Authentication']

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
      return await answerSignIn(rt, request, reply, s)
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
        const s = await refresh(rt.ctx, cookie)
        await rt.caughtUp(request, s.position)
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
        await rt.caughtUp(request, position)
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
      return await answerSignIn(rt, request, reply, s)
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
      return await answerSignIn(rt, request, reply, s)
    }
  })
}
