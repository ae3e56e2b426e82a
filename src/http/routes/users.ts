import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { revokeSession } from '../../commands/refresh-session.ts'
import { changePassword } from '../../commands/account-recovery.ts'
import { deleteAccount } from '../../commands/delete-account.ts'
import { requestEmailChange } from '../../commands/change-email.ts'
import { disableTwoFactor, enableTwoFactor, verifyTwoFactorSetup } from '../../commands/two-factor.ts'
import { changeLocale } from '../../commands/change-locale.ts'
import type { SessionDoc } from '../../projections/sessions.ts'
import type { UserDoc } from '../../projections/users.ts'
import { authenticate, type Principal } from '../plugins/auth.ts'
import { HttpProblem, parseUuid, parseWith } from '../problem.ts'
import type { HttpRuntime } from '../runtime.ts'

function profile (u: UserDoc): Record<string, unknown> {
  return { uuid: u.uuid, email: u.email, locale: u.locale, status: u.status, two_factor_enabled: u.two_factor_enabled, created_at: u.created_at, confirmed_at: u.confirmed_at }
}

/** Account (interface section 4, "Account"): profile and sessions. Auth J. */
export function userRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  const users = () => rt.ctx.reads.collection<UserDoc>('users')

  /**
   * The `{uuid}` user of the path, who must be the caller.
   * @throws HttpProblem 400 malformed uuid, 401, 404 no such user, 403 someone else.
   */
  const ownUser = async (request: FastifyRequest, action: string, options: { deleted_account?: boolean } = {}): Promise<{ uuid: string, principal: Principal, user: UserDoc | null }> => {
    const uuid = parseUuid((request.params as { uuid?: string }).uuid)
    const principal = await authenticate(rt.ctx, request, 'jwt', options)
    if (principal.account_deleted) {
      // Only DELETE opts in: on its own deleted account it answers "already deleted" (400).
      if (uuid !== principal.user_uuid) throw new HttpProblem(401, 'auth.unauthorized', 'the account is not active')
      return { uuid, principal, user: null }
    }
    const user = await users().get(uuid)
    if (!user) throw new HttpProblem(404, 'user.not_found', 'no such user')
    if (uuid !== principal.user_uuid) throw new HttpProblem(403, 'user.forbidden', `you may only ${action} your own account`)
    return { uuid, principal, user }
  }

  app.get('/api/users/me', async request => {
    const p = await authenticate(rt.ctx, request, 'jwt')
    const u = await users().get(p.user_uuid)
    if (!u) throw new HttpProblem(401, 'auth.unauthorized', 'the account is not active')
    return profile(u)
  })

  app.get('/api/users/:uuid', async request => {
    return profile((await ownUser(request, 'read')).user!)
  })

  app.delete('/api/users/:uuid', async (request, reply) => {
    const { uuid } = await ownUser(request, 'delete', { deleted_account: true })
    const body = parseWith(z.object({ password: z.string().max(4096) }), request.body, 'delete_user.invalid_password')
    const position = await deleteAccount(rt.ctx, uuid, body.password)
    await rt.caughtUp(position)
    return reply.code(204).send()
  })

  app.patch('/api/users/:uuid/email', async (request, reply) => {
    const { uuid } = await ownUser(request, 'change the address of')
    const body = parseWith(z.object({ new_email: z.string().trim().max(320), current_password: z.string().max(4096) }), request.body, 'change_email.invalid_request')
    await requestEmailChange(rt.ctx, uuid, body)
    return reply.code(204).send()
  })

  app.patch('/api/users/:uuid/password', async (request, reply) => {
    const { uuid, principal: p } = await ownUser(request, 'change the password of')
    const body = parseWith(z.object({ current_password: z.string().max(4096), new_password: z.string().max(4096) }), request.body, 'change_password.invalid_request')
    await changePassword(rt.ctx, uuid, p.session_uuid, body)
    return reply.code(204).send()
  })

  app.patch('/api/users/me/locale', async (request, reply) => {
    const p = await authenticate(rt.ctx, request, 'jwt', { deleted_account: true })
    const body = parseWith(z.object({ locale: z.string().max(35) }), request.body, 'change_locale.invalid_locale')
    await rt.caughtUp(await changeLocale(rt.ctx, p.user_uuid, body.locale))
    return reply.code(204).send()
  })

  app.get('/api/users/me/2fa', async request => {
    const p = await authenticate(rt.ctx, request, 'jwt')
    return { enabled: (await users().get(p.user_uuid))?.two_factor_enabled === true }
  })

  app.post('/api/users/me/2fa/enable', async request => {
    const p = await authenticate(rt.ctx, request, 'jwt')
    return await enableTwoFactor(rt.ctx, p.user_uuid)
  })

  app.post('/api/users/me/2fa/verify-setup', async (request, reply) => {
    const p = await authenticate(rt.ctx, request, 'jwt')
    const body = parseWith(z.object({ code: z.string().max(64) }), request.body, 'verify_2fa_setup.invalid_code')
    await rt.caughtUp(await verifyTwoFactorSetup(rt.ctx, p.user_uuid, body.code))
    return reply.code(204).send()
  })

  app.post('/api/users/me/2fa/disable', async (request, reply) => {
    const p = await authenticate(rt.ctx, request, 'jwt', { deleted_account: true })
    const body = parseWith(z.object({ password: z.string().max(4096), code: z.string().max(64) }), request.body, 'disable_2fa.invalid_request')
    await rt.caughtUp(await disableTwoFactor(rt.ctx, p.user_uuid, body.password, body.code))
    return reply.code(204).send()
  })

  app.get('/api/users/me/sessions', async request => {
    const p = await authenticate(rt.ctx, request, 'jwt')
    const { items } = await rt.ctx.reads.collection<SessionDoc>('sessions').find({ user_uuid: p.user_uuid, revoked_at: null }, { sort: { started_at: -1 } })
    const now = new Date().toISOString()
    return items.filter(s => s.expires_at > now).map(s => ({
      uuid: s.uuid, method: s.method, started_at: s.started_at, last_used_at: s.last_used_at, expires_at: s.expires_at, current: s.uuid === p.session_uuid
    }))
  })

  app.delete('/api/users/me/sessions/:uuid', async (request, reply) => {
    const uuid = parseUuid((request.params as { uuid?: string }).uuid)
    const p = await authenticate(rt.ctx, request, 'jwt')
    const position = await revokeSession(rt.ctx, uuid, 'revoked', p.user_uuid)
    await rt.caughtUp(position)
    return reply.code(204).send()
  })
}
