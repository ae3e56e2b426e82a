import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { revokeSession } from '../../commands/session/revoke-session.ts'
import { changePassword } from '../../flows/revoke-sessions/change-password.ts'
import { deleteUser } from '../../flows/delete-account/delete-user.ts'
import { changeEmail } from '../../commands/user/change-email.ts'
import { changeLocale } from '../../commands/user/change-locale.ts'
import { disableTwoFactor } from '../../flows/revoke-sessions/disable-two-factor.ts'
import { enableTwoFactor } from '../../commands/user/enable-two-factor.ts'
import { verifyTwoFactorSetup } from '../../flows/revoke-sessions/verify-two-factor-setup.ts'
import { openSessions } from '../../projections/sessions.ts'
import { getUser, getUserDoc, type UserDoc } from '../../projections/users.ts'
import { principalOf, type Principal } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { BODY_PROBLEMS, NoContent, Timestamp, UuidParams, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

/** A user's profile (docs/interface.md §2: uuid, email, locale, two-factor status). */
const Profile = z
  .object({
    uuid: z.string(),
    email: z.string(),
    locale: z.string(),
    status: z.enum(['unconfirmed', 'confirmed']),
    two_factor_enabled: z.boolean(),
    created_at: Timestamp,
    confirmed_at: Timestamp.nullable()
  })
  .meta({ id: 'Profile' })

function profile(u: UserDoc): z.infer<typeof Profile> {
  return {
    uuid: u.uuid,
    email: u.email,
    locale: u.locale,
    status: u.status,
    two_factor_enabled: u.two_factor_enabled,
    created_at: u.created_at,
    confirmed_at: u.confirmed_at
  }
}

const Session = z
  .object({
    uuid: z.string(),
    method: z.string().meta({ description: '`password`, `confirmation`, or `oauth` (an application the account authorized)' }),
    client_id: z.string().nullable().meta({ description: 'the OAuth client of an `oauth` session (from POST /oauth/register), null otherwise' }),
    started_at: Timestamp,
    last_used_at: Timestamp,
    expires_at: Timestamp,
    current: z.boolean().meta({ description: 'the session of this access token' })
  })
  .meta({ id: 'Session' })

const TwoFactorSetup = z.object({
  secret: z.string().meta({ description: 'TOTP secret (base32)' }),
  otpauth_uri: z.string(),
  backup_codes: z.array(z.string()).meta({ description: 'single-use; shown once' })
})

const Password = z.string().max(4096)
/** With two-factor on, a credential change needs a second factor too (ASVS 5.0 V7.5.1). */
const SecondFactorCode = z.string().max(64).meta({ description: 'with two-factor on: a code from the authenticator app or a backup code' })

/** Account (docs/interface.md §4, "Account"): profile, credentials, two-factor, sessions. Auth J. */
export function userRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Account']

  /**
   * The `{uuid}` user of the path, who must be the caller.
   * @throws HttpProblem 404 no such user, 403 someone else; 401 for a deleted account's
   *   token unless it is its own DELETE (which answers "already deleted").
   */
  const ownUser = async (request: FastifyRequest, uuid: string, action: string): Promise<{ principal: Principal; user: UserDoc | null }> => {
    const principal = principalOf(request)
    if (principal.account_deleted) {
      if (uuid !== principal.user_uuid) throw new HttpProblem(401, 'auth.unauthorized', 'the account is not active')
      return { principal, user: null }
    }
    const user = await getUser(rt.ctx, uuid)
    if (!user) throw new HttpProblem(404, 'user.not_found', 'no such user')
    if (uuid !== principal.user_uuid) throw new HttpProblem(403, 'user.forbidden', `you may only ${action} your own account`)
    return { principal, user }
  }

  app.route({
    method: 'GET',
    url: '/api/users/me',
    config: { auth: 'jwt' },
    schema: { operationId: 'getMe', summary: "The caller's profile", tags, response: { 200: Profile, ...problems(401) } },
    handler: async request => {
      const u = await getUser(rt.ctx, principalOf(request).user_uuid)
      if (!u) throw new HttpProblem(401, 'auth.unauthorized', 'the account is not active')
      return profile(u)
    }
  })

  app.route({
    method: 'GET',
    url: '/api/users/:uuid',
    config: { auth: 'jwt' },
    schema: {
      operationId: 'getUser',
      summary: "A profile (the caller's own)",
      tags,
      params: UuidParams,
      response: { 200: Profile, ...problems(400, 401, 403, 404) }
    },
    handler: async request => profile((await ownUser(request, request.params.uuid, 'read')).user!)
  })

  app.route({
    method: 'DELETE',
    url: '/api/users/:uuid',
    config: { auth: 'jwt', deleted_account: true, invalid: 'delete_user.invalid_password' },
    schema: {
      operationId: 'deleteUser',
      summary: 'Delete the account (its personal data is erased)',
      tags,
      params: UuidParams,
      body: z.object({ password: Password }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 401, 403, 404, 429) }
    },
    handler: async (request, reply) => {
      await ownUser(request, request.params.uuid, 'delete')
      await rt.caughtUp(request, await deleteUser(rt.ctx, request.params.uuid, request.body.password))
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'PATCH',
    url: '/api/users/:uuid/email',
    config: { auth: 'jwt', invalid: 'change_email.invalid_request' },
    schema: {
      operationId: 'changeEmail',
      summary: 'Change the address: a link is mailed to the new one',
      tags,
      params: UuidParams,
      body: z.object({ new_email: z.string().trim().max(320), current_password: Password, code: SecondFactorCode.optional() }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 401, 403, 404, 409, 429) }
    },
    handler: async (request, reply) => {
      await ownUser(request, request.params.uuid, 'change the address of')
      await changeEmail(rt.ctx, request.params.uuid, request.body)
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'PATCH',
    url: '/api/users/:uuid/password',
    config: { auth: 'jwt', invalid: 'change_password.invalid_request' },
    schema: {
      operationId: 'changePassword',
      summary: 'Change the password (other sessions are signed out)',
      tags,
      params: UuidParams,
      body: z.object({ current_password: Password, new_password: Password, code: SecondFactorCode.optional() }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 401, 403, 404, 429) }
    },
    handler: async (request, reply) => {
      const { principal } = await ownUser(request, request.params.uuid, 'change the password of')
      await changePassword(rt.ctx, request.params.uuid, principal.session_uuid, request.body)
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'PATCH',
    url: '/api/users/me/locale',
    config: { auth: 'jwt', deleted_account: true, invalid: 'change_locale.invalid_locale' },
    schema: {
      operationId: 'changeLocale',
      summary: 'The locale of transactional mails',
      tags,
      body: z.object({ locale: z.string().max(35) }).meta({ examples: [{ locale: 'fr' }] }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 401, 404) }
    },
    handler: async (request, reply) => {
      await rt.caughtUp(request, await changeLocale(rt.ctx, principalOf(request).user_uuid, request.body.locale))
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'GET',
    url: '/api/users/me/2fa',
    config: { auth: 'jwt' },
    schema: {
      operationId: 'getTwoFactor',
      summary: 'Whether two-factor authentication is on',
      tags,
      response: { 200: z.object({ enabled: z.boolean() }), ...problems(401) }
    },
    handler: async request => ({ enabled: (await getUserDoc(rt.ctx, principalOf(request).user_uuid))?.two_factor_enabled === true })
  })

  app.route({
    method: 'POST',
    url: '/api/users/me/2fa/enable',
    config: { auth: 'jwt' },
    schema: {
      operationId: 'enableTwoFactor',
      summary: 'Start two-factor setup: a TOTP secret, its otpauth URI and backup codes',
      tags,
      response: { 200: TwoFactorSetup, ...problems(401, 404, 409) }
    },
    handler: async request => await enableTwoFactor(rt.ctx, principalOf(request).user_uuid)
  })

  app.route({
    method: 'POST',
    url: '/api/users/me/2fa/verify-setup',
    config: { auth: 'jwt', invalid: 'verify_2fa_setup.invalid_code' },
    schema: {
      operationId: 'verifyTwoFactorSetup',
      summary: 'Turn two-factor on with a first TOTP code of the setup (the account is mailed; other sessions are signed out)',
      tags,
      body: z.object({ code: z.string().max(64).meta({ description: 'a TOTP code of the secret `enable` gave' }) }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 401, 404, 409) }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      // A change of factors ends the account's other sessions (ASVS 5.0 V7.4.3): flow `revoke-sessions`.
      await rt.caughtUp(request, await verifyTwoFactorSetup(rt.ctx, p.user_uuid, p.session_uuid, request.body.code))
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'POST',
    url: '/api/users/me/2fa/disable',
    config: { auth: 'jwt', deleted_account: true, invalid: 'disable_2fa.invalid_request' },
    schema: {
      operationId: 'disableTwoFactor',
      summary: 'Turn two-factor off with the password and a code (other sessions are signed out)',
      tags,
      body: z.object({ password: Password, code: z.string().max(64) }),
      response: { 204: NoContent, ...problems(...BODY_PROBLEMS, 401, 404, 429) }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      await rt.caughtUp(request, await disableTwoFactor(rt.ctx, p.user_uuid, p.session_uuid, request.body.password, request.body.code))
      return reply.code(204).send()
    }
  })

  app.route({
    method: 'GET',
    url: '/api/users/me/sessions',
    config: { auth: 'jwt' },
    schema: {
      operationId: 'listSessions',
      summary: "The account's active sessions, newest first",
      tags,
      response: { 200: z.array(Session), ...problems(401) }
    },
    handler: async request => {
      const p = principalOf(request)
      const items = await openSessions(rt.ctx, p.user_uuid)
      const now = new Date().toISOString()
      return items
        .filter(s => s.expires_at > now)
        .map(s => ({
          uuid: s.uuid,
          method: s.method,
          client_id: s.client_id ?? null,
          started_at: s.started_at,
          last_used_at: s.last_used_at,
          expires_at: s.expires_at,
          current: s.uuid === p.session_uuid
        }))
    }
  })

  app.route({
    method: 'DELETE',
    url: '/api/users/me/sessions/:uuid',
    config: { auth: 'jwt' },
    schema: {
      operationId: 'revokeSession',
      summary: 'Sign a session out (its refresh token stops too)',
      tags,
      params: UuidParams,
      response: { 204: NoContent, ...problems(400, 401, 403, 404) }
    },
    handler: async (request, reply) => {
      await rt.caughtUp(request, await revokeSession(rt.ctx, request.params.uuid, 'revoked', principalOf(request).user_uuid))
      return reply.code(204).send()
    }
  })
}
