import type { FastifyInstance } from 'fastify'
import { revokeSession } from '../../commands/refresh-session.ts'
import type { SessionDoc } from '../../projections/sessions.ts'
import type { UserDoc } from '../../projections/users.ts'
import { authenticate } from '../plugins/auth.ts'
import { HttpProblem, parseUuid } from '../problem.ts'
import type { HttpRuntime } from '../runtime.ts'

function profile (u: UserDoc): Record<string, unknown> {
  return { uuid: u.uuid, email: u.email, locale: u.locale, status: u.status, two_factor_enabled: u.two_factor_enabled, created_at: u.created_at, confirmed_at: u.confirmed_at }
}

/** Account (interface section 4, "Account"): profile and sessions. Auth J. */
export function userRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  const users = () => rt.ctx.reads.collection<UserDoc>('users')

  app.get('/api/users/me', async request => {
    const p = await authenticate(rt.ctx, request, 'jwt')
    const u = await users().get(p.user_uuid)
    if (!u) throw new HttpProblem(401, 'auth.unauthorized', 'the account is not active')
    return profile(u)
  })

  app.get('/api/users/:uuid', async request => {
    const uuid = parseUuid((request.params as { uuid?: string }).uuid)
    const p = await authenticate(rt.ctx, request, 'jwt')
    const u = await users().get(uuid)
    if (!u) throw new HttpProblem(404, 'user.not_found', 'no such user')
    if (uuid !== p.user_uuid) throw new HttpProblem(403, 'user.forbidden', 'you may only read your own profile')
    return profile(u)
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
