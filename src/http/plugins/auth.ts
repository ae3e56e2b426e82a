import type { FastifyInstance, FastifyRequest } from 'fastify'
import { SCOPES, isReadScope, type Scope } from '../../domain/api-key/scopes.ts'
import { sha256Hex } from '../../lib/crypto/hashing.ts'
import { verifyAccessToken } from '../../lib/crypto/jwt.ts'
import { apiKeyByHash } from '../../projections/api-keys.ts'
import { agentByHash } from '../../projections/agents.ts'
import { AGENT_TOKEN_PREFIX } from '../../commands/agent/create-agent.ts'
import type { Plan } from '../../domain/plans.ts'
import { planOf } from '../../projections/subscriptions.ts'
import { getUserDoc, type UserDoc } from '../../projections/users.ts'
import { getSession } from '../../projections/sessions.ts'
import { issuersOf, type CommandContext } from '../../commands/context.ts'
import { HttpProblem } from '../problem.ts'
import { isBefore, type Environment } from '../../domain/shared.ts'
import { users } from '../../commands/user/aggregate.ts'

/** The authenticated caller. */
export interface Principal {
  kind: 'session' | 'api_key' | 'agent' | 'oauth'
  user_uuid: string
  /** The environment it acts in: a key's own; `live` for agents, OAuth grants and sessions (see `environmentOf` for what it reads). */
  environment: Environment
  key_uuid: string | null
  session_uuid: string | null
  agent_uuid: string | null
  scopes: readonly Scope[]
  /** Checks it may run: a key's enabled checks, an agent's or a session's the plan's, always within the plan. */
  enabled_checks: readonly string[]
  /** The account's plan now (its caps and rate limit: docs/interface.md §8). */
  plan: Plan
  /**
   * Set only for operations that opt in with `deleted_account: true`: the access token is
   * genuine and unexpired, but its account has been deleted since it was issued.
   */
  account_deleted?: boolean
}

/** Which credentials an operation accepts (docs/interface.md §4: J, A, key only). */
type AuthMode = 'jwt' | 'any' | 'api_key'

/**
 * How a route is guarded, declared in its `config` and read by `authPlugin`:
 * `auth` the credentials it accepts (`none`: public), `scope` the scope a key or agent
 * token needs (the interface's, checked first), `write_scope` a second one it needs as well
 * where the interface names a read scope for an operation that changes something (issue 42
 * item 5: `PATCH /api/keys/{uuid}` needs `api_keys:read` and `api_keys:create`, so that no
 * read-only credential changes anything), `deleted_account` whether a deleted account's
 * unexpired token gets the route's own answer (see `authenticate`). `invalid` is the
 * machine code of a body or query that fails its schema (default `request.invalid_request`).
 */
export interface RouteGuard {
  auth: AuthMode | 'none'
  scope?: Scope
  write_scope?: Scope
  deleted_account?: boolean
  invalid?: string
}

declare module 'fastify' {
  interface FastifyContextConfig extends Partial<RouteGuard> {}
  interface FastifyRequest {
    /** The authenticated caller (null on public routes). */
    principal: Principal | null
  }
}

const unauthorized = (detail: string): HttpProblem => new HttpProblem(401, 'auth.unauthorized', detail)

/** Whether an account may act: it exists, is confirmed and is not banned. */
const isActive = (user: UserDoc | null): user is UserDoc => user !== null && user.status === 'confirmed' && !user.banned

function bearer(request: FastifyRequest): string | null {
  const h = request.headers.authorization
  if (typeof h !== 'string') return null
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h)
  return m ? m[1] : null
}

/**
 * Authenticates a request (docs/interface.md §5): `Authorization: Bearer` with a JWT access
 * token (EdDSA; issuer, audience, type and expiry checked), an API key (`svc_…` /
 * `svc_test_…`) or an agent token (`sva_…`), both looked up by SHA-256; an OAuth access
 * token (a JWT of a grant: `client_id`, `scope`) is accepted where keys and agent tokens
 * are (mode `any`). An agent's and an OAuth grant's scopes are held within what the plan
 * allows on every request (docs/interface.md §5.4), so a downgrade narrows them at once. The account must
 * exist, be confirmed and not banned. With `deleted_account`, a genuine unexpired access
 * token whose account was deleted since yields a principal marked `account_deleted`
 * (interface: DELETE /api/users/{uuid} "already deleted", 404 on locale and 2FA disable).
 * @throws HttpProblem 401 `auth.unauthorized` for a missing, invalid or unaccepted credential.
 */
async function authenticate(ctx: CommandContext, request: FastifyRequest, mode: AuthMode, options: { deleted_account?: boolean } = {}): Promise<Principal> {
  const token = bearer(request)
  if (!token) throw unauthorized('missing bearer credential')
  const user = async (uuid: string): Promise<UserDoc | null> => await getUserDoc(ctx, uuid)
  if (token.startsWith('svc_')) {
    if (mode === 'jwt') throw unauthorized('this operation needs a session access token, not an API key')
    const key = await apiKeyByHash(ctx, sha256Hex(token))
    if (!key || key.revoked_at !== null) throw unauthorized('unknown or revoked API key')
    const [account, plan] = await Promise.all([user(key.user_uuid), planOf(ctx, ctx.config.plans, key.user_uuid)])
    if (!isActive(account)) throw unauthorized("the key's account is not active")
    return {
      kind: 'api_key',
      user_uuid: key.user_uuid,
      environment: key.environment,
      key_uuid: key.uuid,
      session_uuid: null,
      agent_uuid: null,
      scopes: key.scopes as Scope[],
      enabled_checks: key.enabled_checks.filter(c => plan.allowed_checks.includes(c as never)),
      plan
    }
  }
  if (mode === 'api_key') throw unauthorized('this operation needs an API key')
  if (token.startsWith(AGENT_TOKEN_PREFIX)) {
    if (mode === 'jwt') throw unauthorized('this operation needs a session access token, not an agent token')
    const agent = await agentByHash(ctx, sha256Hex(token))
    if (!agent || agent.revoked_at !== null) throw unauthorized('unknown or revoked agent token')
    const [account, plan] = await Promise.all([user(agent.user_uuid), planOf(ctx, ctx.config.plans, agent.user_uuid)])
    if (!isActive(account)) throw unauthorized("the agent's account is not active")
    // Granted scopes within what the plan allows now: a downgrade takes away what the new plan does not allow (as for OAuth grants).
    const scopes = (agent.scopes as Scope[]).filter(s => plan.allowed_scopes.includes(s))
    return {
      kind: 'agent',
      user_uuid: agent.user_uuid,
      environment: 'live',
      key_uuid: null,
      session_uuid: null,
      agent_uuid: agent.uuid,
      scopes,
      enabled_checks: plan.allowed_checks,
      plan
    }
  }
  const claims = await verifyAccessToken(ctx.secrets, issuersOf(ctx), token)
  if (!claims) throw unauthorized('invalid or expired access token')
  // A revoked session ends its access tokens at once, not only when they expire.
  const [session, plan] = await Promise.all([getSession(ctx, claims.session_uuid), planOf(ctx, ctx.config.plans, claims.user_uuid)])
  if (claims.grant && mode === 'jwt') throw unauthorized("this operation needs a session access token, not an OAuth client's")
  const scopes = claims.grant ? SCOPES.filter(s => claims.grant!.scopes.includes(s) && plan.allowed_scopes.includes(s)) : SCOPES
  const principal: Principal = {
    kind: claims.grant ? 'oauth' : 'session',
    user_uuid: claims.user_uuid,
    environment: 'live',
    key_uuid: null,
    session_uuid: claims.session_uuid,
    agent_uuid: null,
    scopes,
    enabled_checks: plan.allowed_checks,
    plan
  }
  const account = session && session.revoked_at === null ? await user(claims.user_uuid) : null
  // A ban voids every session started before it, whether or not its revocation has landed.
  if (isActive(account) && (account.sessions_valid_from === null || !isBefore(session!.started_at, account.sessions_valid_from))) return principal
  // The few operations whose rows list an answer for a deleted account (400 "already
  // deleted", 404) give it to a still-unexpired token of that account; it can change nothing.
  if (options.deleted_account && (await users.load(ctx, claims.user_uuid)).state.status === 'deleted') return { ...principal, account_deleted: true }
  throw unauthorized(session && session.revoked_at === null ? 'the account is not active' : 'the session was signed out or revoked')
}

/** Methods that change something (RFC 9110 §9.2.1: not safe). */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * Why a route's guard is refused at registration, or null: no `config.auth`; a write scope
 * that is a read scope; or a method that changes something guarded by read scopes only
 * (issue 42 item 5: such a route must name a `write_scope`). A route that names no scope
 * checks its own (`/mcp`: each tool its operation's).
 */
export function guardFault(method: string | readonly string[], url: string, guard: Partial<RouteGuard> | undefined): string | null {
  if (guard?.auth === undefined) return url.startsWith('/docs') ? null : 'declares no config.auth'
  if (guard.write_scope !== undefined && isReadScope(guard.write_scope)) return `names the read scope ${guard.write_scope} as its write scope`
  const writes = ([] as string[]).concat(method).some(m => WRITES.has(m))
  if (writes && guard.scope !== undefined && isReadScope(guard.scope) && guard.write_scope === undefined)
    return `changes something but is guarded by the read scope ${guard.scope} alone: name a write_scope`
  return null
}

/**
 * The one place routes are authenticated: an `onRequest` hook that reads each route's
 * `config.auth`, `config.scope` and `config.write_scope` (docs/interface.md §5) and sets
 * `request.principal`. A route whose guard `guardFault` refuses (no `config.auth`, a write
 * guarded by a read scope alone) fails at registration: better than an open route.
 * @throws HttpProblem 401, 403 as `authenticate` and `requireScope`.
 */
export function authPlugin(app: FastifyInstance, ctx: CommandContext): void {
  app.decorateRequest('principal', null)
  app.addHook('onRoute', route => {
    const fault = guardFault(route.method, route.url, route.config)
    if (fault) throw new Error(`route ${route.method} ${route.url} ${fault}`)
  })
  app.addHook('onRequest', async request => {
    const guard = request.routeOptions.config
    if (!guard.auth || guard.auth === 'none') return
    const principal = await authenticate(ctx, request, guard.auth, { deleted_account: guard.deleted_account })
    if (guard.scope) requireScope(principal, guard.scope)
    if (guard.write_scope) requireScope(principal, guard.write_scope)
    request.principal = principal
  })
}

/** The authenticated caller of a guarded route. @throws Error on a public route (a wiring mistake). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`${request.method} ${request.url}: no principal (route not guarded)`)
  return request.principal
}

/**
 * Whose environment's data a caller reads and changes (issue 42 item 10): an API key its
 * own (`svc_test_…` the sandbox's, `svc_…` the live one's), an agent token or OAuth grant
 * the live one's, a session (the account's owner in the console) both: null. Another
 * environment's job, batch or webhook endpoint is "not found" to it, as another account's.
 */
export const environmentOf = (p: Principal): Environment | null => (p.kind === 'session' ? null : p.environment)

/**
 * The environment a list of `operation` shows (`?environment=`, issue 42 item 10): a
 * session's choice (both when it names none); a key's, agent's or OAuth client's own,
 * whatever it names as long as it names its own.
 * @throws HttpProblem 400 `<operation>.other_environment` when a key, agent or OAuth client names the other environment.
 */
export function listedEnvironment(p: Principal, asked: Environment | undefined, operation: string): Environment | null {
  const own = environmentOf(p)
  if (own === null) return asked ?? null
  if (asked !== undefined && asked !== own)
    throw new HttpProblem(400, `${operation}.other_environment`, `this credential reads ${own} data only: leave environment out, or name ${own}`)
  return own
}

/**
 * The principal a write acts as (`environment` in the body of `POST /api/verify`,
 * `/api/batches`, `/api/batches/estimate`): a session (the console's test-mode switch)
 * chooses either environment (live when it names none); a key, agent or OAuth client acts in
 * its own only, whatever it names as long as it names its own. A session's test work is the
 * sandbox's, as a test key's: simulated, free, never mixed with live data.
 * @throws HttpProblem 400 `<operation>.other_environment` when a key, agent or OAuth client names the other environment.
 */
export function actingIn(p: Principal, asked: Environment | undefined, operation: string): Principal {
  if (asked === undefined || asked === p.environment) return p
  if (p.kind === 'session') return { ...p, environment: asked }
  throw new HttpProblem(400, `${operation}.other_environment`, `this credential acts in ${p.environment} only: leave environment out, or name ${p.environment}`)
}

/** Who acts, for event metadata: the key or agent that authenticated, else the account. */
export const actorOf = (p: Principal): string => p.key_uuid ?? p.agent_uuid ?? p.user_uuid

/** @throws HttpProblem 403 `auth.missing_scope` when the principal lacks `scope`. */
function requireScope(p: Principal, scope: Scope): void {
  if (!p.scopes.includes(scope)) throw new HttpProblem(403, 'auth.missing_scope', `this credential lacks the scope ${scope}`)
}
