import type { FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import type { RouteGuard } from './auth.ts'

/** The interface's version (interface section 9). */
export const API_VERSION = '0.9.0'

/** The three credential kinds of interface section 5, as OpenAPI security schemes. */
const SECURITY_SCHEMES = {
  session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from sign-in (`/api/auth/login`, `/api/auth/confirm`, `/api/auth/refresh`): all scopes of the account.' },
  api_key: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_… (live) or svc_test_… (sandbox)', description: 'An API key; it holds the scopes it was created with. `svc_test_` keys run a sandbox and never bill the wallet.' },
  agent_token: { type: 'http', scheme: 'bearer', bearerFormat: 'sva_…', description: 'An agent\'s token; it holds the agent\'s scopes.' }
} as const

/**
 * Security requirements of a route from its guard (interface section 4 "Auth"): J → a
 * session; A → any of the three, a key or agent token holding the scope (OpenAPI 3.1
 * §4.8.30: role names for non-OAuth schemes); key only → an API key; N → none.
 */
export function securityOf (guard: Partial<RouteGuard> | undefined): Array<Record<string, string[]>> {
  const scopes = guard?.scope ? [guard.scope] : []
  switch (guard?.auth) {
    case 'jwt': return [{ session: [] }]
    case 'api_key': return [{ api_key: scopes }]
    case 'any': return [{ session: [] }, { api_key: scopes }, { agent_token: scopes }]
    default: return []
  }
}

/**
 * The interface described (issue "The interface described"): `GET /openapi.json`, an
 * OpenAPI 3.1.0 document generated from the routes' zod schemas (`@fastify/swagger` with
 * `fastify-type-provider-zod`'s transforms), each operation with its security and scope;
 * and `GET /docs`, Swagger UI served from the package's own files (no asset from outside
 * the service; the online validator badge is off). Register before the routes.
 */
export async function openapiPlugin (app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Email Verification Service',
        version: API_VERSION,
        description: 'Tells a sender, before any mail goes out, whether an address will accept mail, why, and how sure we are. Errors are RFC 9457 problem details (`application/problem+json`) with a machine `code`.'
      },
      components: { securitySchemes: SECURITY_SCHEMES },
      tags: [
        { name: 'Verification jobs' }, { name: 'API keys' }, { name: 'Agents' }, { name: 'Webhooks' },
        { name: 'Wallet' }, { name: 'Billing' }, { name: 'Authentication' }, { name: 'Account' }, { name: 'Service' }
      ]
    },
    transform: document => {
      const out = jsonSchemaTransform(document)
      const guard = document.route.config as Partial<RouteGuard> | undefined
      const schema = out.schema as Record<string, unknown>
      if (schema.hide === true) return out
      schema.security = securityOf(guard)
      if (guard?.scope) {
        schema['x-required-scope'] = guard.scope
        schema.description = `${typeof schema.description === 'string' ? `${schema.description}\n\n` : ''}A key or agent token needs the scope \`${guard.scope}\`.`
      }
      return out
    },
    transformObject: jsonSchemaTransformObject
  })
  app.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger())
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { validatorUrl: null, deepLinking: true, docExpansion: 'list' },
    staticCSP: true
  })
}
