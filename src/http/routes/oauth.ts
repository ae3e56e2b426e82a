import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { FailureThrottle } from '../plugins/throttle.ts'
import { HttpProblem, problem, sendProblem } from '../problem.ts'
import formbody from '@fastify/formbody'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { OAUTH_SCOPES, registerClient } from '../../commands/oauth/register-client.ts'
import { OAuthError } from '../../domain/oauth/oauth-error.ts'
import { checkAuthorization, clientById } from '../../commands/oauth/check-authorization.ts'
import { exchangeCode } from '../../flows/oauth-grant/exchange-code.ts'
import { refreshGrant } from '../../flows/oauth-grant/refresh-grant.ts'
import { revokeToken } from '../../flows/oauth-grant/revoke-token.ts'
import type { SignedIn } from '../../commands/session/start-session.ts'
import { NoContent, Problem, json, problems } from '../schemas.ts'
import { planOf } from '../../projections/subscriptions.ts'
import type { HttpRuntime } from '../runtime.ts'
import { consentRoutes, page } from './oauth-consent.ts'

/** An OAuth error answer (RFC 6749 §5.2): `{ error, error_description }`. */
const OAuthErrorBody = z.object({ error: z.string(), error_description: z.string() }).meta({ id: 'OAuthError' })
const oauthErrors = (...statuses: number[]): Record<number, { description: string; content: { 'application/json': { schema: typeof OAuthErrorBody } } }> =>
  Object.fromEntries(statuses.map(s => [s, { description: 'OAuth error (RFC 6749 §5.2)', content: { 'application/json': { schema: OAuthErrorBody } } }]))

const TokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z.string(),
    scope: z.string()
  })
  .meta({ id: 'OAuthTokenResponse' })

/**
 * The error handler of the token, registration and revocation endpoints: what their
 * clients parse is the RFC's shape (RFC 6749 §5.2, RFC 7591 §3.2.2), with `no-store`, for
 * a body that fails the schema, a duplicated parameter or an unreadable body too
 * (`invalid_request`, or `invalid_client_metadata` at registration); a rate limit stays a
 * 429 problem; anything else is logged and answered `server_error`.
 */
function oauthErrorHandler(invalid: 'invalid_request' | 'invalid_client_metadata') {
  return (err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    reply.header('cache-control', 'no-store')
    if (err instanceof OAuthError) return reply.code(err.status).send({ error: err.error, error_description: err.message })
    if (err instanceof HttpProblem && err.status === 429) return sendProblem(reply, problem(429, err.code, err.message))
    const status = (err as FastifyError).statusCode
    if ((err as FastifyError).validation || (typeof status === 'number' && status >= 400 && status < 500))
      return reply.code(400).send({ error: invalid, error_description: err.message.slice(0, 300) })
    request.log.error({ err }, 'oauth endpoint failed')
    return reply.code(500).send({ error: 'server_error', error_description: 'an unexpected error occurred; it has been logged' })
  }
}

/**
 * The scopes a token response names (RFC 6749 §5.1 `scope`): the consented ones the
 * account's plan allows now, as every use of the token is held to them (interface 5.4).
 */
async function usableScopes(rt: HttpRuntime, owner: string, consented: readonly string[]): Promise<string[]> {
  const plan = await planOf(rt.ctx, rt.ctx.config.plans, owner)
  return consented.filter(s => (plan.allowed_scopes as readonly string[]).includes(s))
}

const tokenBody = (s: SignedIn, scopes: readonly string[]): z.infer<typeof TokenResponse> => ({
  access_token: s.access_token,
  token_type: 'Bearer',
  expires_in: s.expires_in,
  refresh_token: s.refresh_token,
  scope: scopes.join(' ')
})

/**
 * OAuth 2.1 authorization server:
 * RFC 8414 metadata, RFC 9728 protected-resource metadata for `/mcp`, RFC 7591 dynamic
 * registration of public clients, `GET /oauth/authorize` as the interface's table says
 * (400, or 302 to the consent page with `state` unchanged), the token endpoint
 * (`authorization_code` with PKCE S256, `refresh_token` with rotation and reuse
 * detection), RFC 7009 revocation, and the consent page (`oauth-consent.ts`). Form bodies
 * (`application/x-www-form-urlencoded`, RFC 6749 §4.1.3) are parsed on these routes only.
 */
export async function oauthRoutes(fastify: FastifyInstance, rt: HttpRuntime): Promise<void> {
  await fastify.register(async scope => {
    await scope.register(formbody, { bodyLimit: 64 * 1024 })
    routes(scope, rt)
    consentRoutes(scope, rt)
  })
}

function routes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  // Registration is open to anyone: 20 clients an hour per client (IP), 1,000 in all.
  const registrations = {
    client: new FailureThrottle({ limit: 20, window_ms: 3_600_000, code: 'register_client.too_many_requests' }),
    all: new FailureThrottle({ limit: 1_000, window_ms: 3_600_000, code: 'register_client.too_many_requests' })
  }
  const tags = ['OAuth']

  app.route({
    method: 'GET',
    url: '/.well-known/oauth-authorization-server',
    config: { auth: 'none' },
    schema: {
      operationId: 'oauthAuthorizationServerMetadata',
      summary: 'Authorization server metadata (RFC 8414)',
      tags,
      response: {
        200: z.object({
          issuer: z.string(),
          authorization_endpoint: z.string(),
          token_endpoint: z.string(),
          registration_endpoint: z.string(),
          revocation_endpoint: z.string(),
          response_types_supported: z.array(z.string()),
          grant_types_supported: z.array(z.string()),
          code_challenge_methods_supported: z.array(z.string()),
          token_endpoint_auth_methods_supported: z.array(z.string()),
          revocation_endpoint_auth_methods_supported: z.array(z.string()),
          scopes_supported: z.array(z.string()),
          authorization_response_iss_parameter_supported: z.boolean()
        }),
        ...problems()
      }
    },
    handler: async () => {
      const base = rt.ctx.base_url()
      return {
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        registration_endpoint: `${base}/oauth/register`,
        revocation_endpoint: `${base}/oauth/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        revocation_endpoint_auth_methods_supported: ['none'],
        scopes_supported: [...OAUTH_SCOPES],
        authorization_response_iss_parameter_supported: true
      }
    }
  })

  const ResourceMetadata = z
    .object({
      resource: z.string(),
      authorization_servers: z.array(z.string()),
      scopes_supported: z.array(z.string()),
      bearer_methods_supported: z.array(z.string()),
      resource_name: z.string()
    })
    .meta({ id: 'ProtectedResourceMetadata' })
  const resourceMetadata = (): z.infer<typeof ResourceMetadata> => {
    const base = rt.ctx.base_url()
    return {
      resource: `${base}/mcp`,
      authorization_servers: [base],
      scopes_supported: [...OAUTH_SCOPES],
      bearer_methods_supported: ['header'],
      resource_name: 'Email verification (MCP)'
    }
  }
  // RFC 9728 §3.1: the metadata of the resource `<base>/mcp` is at `/.well-known/oauth-protected-resource/mcp`; the bare path too, for clients that look there.
  for (const [url, operationId] of [
    ['/.well-known/oauth-protected-resource/mcp', 'oauthProtectedResourceMetadataMcp'],
    ['/.well-known/oauth-protected-resource', 'oauthProtectedResourceMetadata']
  ] as const) {
    app.route({
      method: 'GET',
      url,
      config: { auth: 'none' },
      schema: {
        operationId,
        summary: url.endsWith('/mcp')
          ? 'Protected resource metadata of the MCP endpoint, at its path-aware location (RFC 9728 §3.1)'
          : "Protected resource metadata of the MCP endpoint (RFC 9728), at the host's root",
        tags,
        response: { 200: json(ResourceMetadata, 'The metadata (RFC 9728 §2)'), ...problems() }
      },
      handler: async () => resourceMetadata()
    })
  }

  app.route({
    method: 'POST',
    url: '/oauth/register',
    config: { auth: 'none', invalid: 'register_client.invalid_request' },
    errorHandler: oauthErrorHandler('invalid_client_metadata'),
    schema: {
      operationId: 'oauthRegisterClient',
      summary: 'Dynamic client registration of a public client (RFC 7591)',
      tags,
      body: z
        .object({
          redirect_uris: z.array(z.string().max(2_000)).max(10),
          client_name: z.string().max(200).optional(),
          grant_types: z.array(z.string().max(64)).max(5).optional(),
          response_types: z.array(z.string().max(64)).max(5).optional(),
          token_endpoint_auth_method: z.string().max(64).optional(),
          scope: z.string().max(1_000).optional()
        })
        .passthrough(),
      response: {
        201: z.object({
          client_id: z.string(),
          client_id_issued_at: z.number().int(),
          client_name: z.string(),
          redirect_uris: z.array(z.string()),
          grant_types: z.array(z.string()),
          response_types: z.array(z.string()),
          token_endpoint_auth_method: z.literal('none'),
          scope: z.string()
        }),
        ...oauthErrors(400),
        ...problems(429)
      }
    },
    handler: async (request, reply) => {
      registrations.client.attempt(request.ip)
      registrations.all.attempt('all')
      const c = await registerClient(rt.ctx, request.body)
      await rt.caughtUp(request, c.position)
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({
          client_id: c.client_id,
          client_id_issued_at: Math.floor(Date.parse(c.registered_at) / 1000),
          client_name: c.client_name,
          redirect_uris: c.redirect_uris,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          scope: c.scopes.join(' ')
        })
    }
  })

  app.route({
    method: 'GET',
    url: '/oauth/authorize',
    config: { auth: 'none' },
    schema: {
      operationId: 'oauthAuthorize',
      summary: 'Authorization request (code with PKCE S256): 302 to the consent page, `state` carried through unchanged',
      tags,
      // The interface's table: five are required; scope and state are not.
      querystring: z.object({
        response_type: z.string().max(64).meta({ description: 'must be `code`' }),
        client_id: z.string().max(100).meta({ description: 'the public client id' }),
        redirect_uri: z.string().max(2_000).meta({ description: "exactly one of the client's registered redirect URIs" }),
        code_challenge: z.string().max(200).meta({ description: "the PKCE challenge (RFC 7636): base64url of the verifier's SHA-256, 43 characters" }),
        code_challenge_method: z.string().max(64).meta({ description: 'must be `S256`' }),
        scope: z.string().max(1_000).optional().meta({ description: 'space-delimited scopes; informational (what the client may be granted bounds it)' }),
        state: z.string().max(1_000).optional().meta({ description: 'opaque anti-CSRF value, echoed back unchanged' })
      }),
      response: {
        302: z.null().meta({ description: 'To the consent page' }),
        400: {
          description: 'Any validation failure (unknown client_id, unregistered redirect_uri, malformed response_type or PKCE parameter)',
          content: { 'text/html': { schema: z.string() } }
        },
        ...problems(429),
        // The only success is the 302: `default` says what else may come (a problem), and is what OpenAPI tools read as its outcome when no 2xx exists.
        default: { description: 'Any other answer: a problem (RFC 9457)', content: { 'application/problem+json': { schema: Problem } } }
      }
    },
    // A missing or oversized parameter is the same HTML page as any other validation failure (a person reads it).
    errorHandler: (err, request, reply) => {
      if ((err as FastifyError).validation)
        return page(reply.code(400), request, 'error', { message: `the authorization request is malformed: ${err.message}` })
      throw err
    },
    handler: async (request, reply) => {
      const checked = await checkAuthorization(rt.ctx, request.query)
      if (!checked.ok) return page(reply.code(400), request, 'error', { message: checked.refusal.description })
      return reply.redirect(`/oauth/consent?req=${encodeURIComponent(checked.signed)}`, 302)
    }
  })

  app.route({
    method: 'POST',
    url: '/oauth/token',
    config: { auth: 'none', invalid: 'token.invalid_request' },
    errorHandler: oauthErrorHandler('invalid_request'),
    schema: {
      operationId: 'oauthToken',
      summary: 'Token endpoint: authorization_code (with code_verifier) or refresh_token (rotated)',
      tags,
      body: z.object({
        grant_type: z.string().max(64),
        code: z.string().max(200).optional(),
        redirect_uri: z.string().max(2_000).optional(),
        client_id: z.string().max(100).optional(),
        code_verifier: z.string().max(200).optional(),
        refresh_token: z.string().max(200).optional(),
        scope: z.string().max(1_000).optional()
      }),
      response: { 200: TokenResponse, ...oauthErrors(400, 401), ...problems() }
    },
    handler: async (request, reply) => {
      const b = request.body
      const usable = async (owner: string, consented: readonly string[]): Promise<string[]> => await usableScopes(rt, owner, consented)
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      // A public client identifies itself by client_id (RFC 6749 §2.3, §3.2.1): an unknown one is invalid_client.
      if (b.client_id !== undefined && (b.grant_type === 'authorization_code' || b.grant_type === 'refresh_token') && !(await clientById(rt.ctx, b.client_id)))
        throw new OAuthError('invalid_client', 'unknown client_id', 401)
      if (b.grant_type === 'authorization_code') {
        const s = await exchangeCode(rt.ctx, b).catch(async (err: unknown) => {
          // A replayed code's refusal revoked a grant: the answer waits until no read of that grant's tokens can still pass.
          if (err instanceof OAuthError && err.position !== null) await rt.caughtUp(request, err.position)
          throw err
        })
        await rt.caughtUp(request, s.position)
        return reply.code(200).send(tokenBody(s, await usable(s.user_uuid, s.scopes)))
      }
      if (b.grant_type === 'refresh_token') {
        const s = await refreshGrant(rt.ctx, b)
        await rt.caughtUp(request, s.position)
        return reply.code(200).send(tokenBody(s, await usable(s.user_uuid, s.grant?.scopes ?? [])))
      }
      throw new OAuthError('unsupported_grant_type', 'grant_type: authorization_code or refresh_token')
    }
  })

  app.route({
    method: 'POST',
    url: '/oauth/revoke',
    config: { auth: 'none', invalid: 'revoke.invalid_request' },
    errorHandler: oauthErrorHandler('invalid_request'),
    schema: {
      operationId: 'oauthRevoke',
      summary: 'Token revocation (RFC 7009): the grant of a refresh or access token ends; the same 200 for any token',
      tags,
      body: z.object({
        token: z.string().min(1).max(60_000).meta({ description: 'the refresh or access token to revoke (RFC 7009 §2.1)' }),
        token_type_hint: z.string().max(64).optional().meta({ description: '`refresh_token` or `access_token`: a hint only, never needed (RFC 7009 §2.1)' }),
        client_id: z.string().min(1).max(100).meta({ description: 'the public client that holds the token (RFC 6749 §2.3: a public client identifies itself)' })
      }),
      response: {
        200: NoContent.meta({ description: 'Revoked, or nothing to revoke: the same empty answer for any token (RFC 7009 §2.2)' }),
        ...oauthErrors(400, 401),
        ...problems()
      }
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store')
      if (!(await clientById(rt.ctx, request.body.client_id))) throw new OAuthError('invalid_client', 'unknown client_id', 401)
      await rt.caughtUp(request, await revokeToken(rt.ctx, request.body))
      return reply.code(200).send()
    }
  })
}
