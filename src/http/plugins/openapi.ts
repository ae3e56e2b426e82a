import type { FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import type { RouteGuard } from './auth.ts'
import { PROBLEM_EXAMPLES } from '../schemas.ts'

/** The interface's version (docs/interface.md §9). */
const API_VERSION = '0.9.0'

/** The three credential kinds of docs/interface.md §5, as OpenAPI security schemes. */
const SECURITY_SCHEMES = {
  session: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'An access token from sign-in (`/api/auth/login`, `/api/auth/confirm`, `/api/auth/refresh`): all scopes of the account.'
  },
  api_key: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'svc_… (live) or svc_test_… (sandbox)',
    description: 'An API key; it holds the scopes it was created with. `svc_test_` keys run a sandbox and never bill the wallet.'
  },
  agent_token: { type: 'http', scheme: 'bearer', bearerFormat: 'sva_…', description: "An agent's token; it holds the agent's scopes." },
  refresh_cookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc_refresh',
    description:
      'The refresh token a sign-in sets (HttpOnly, SameSite=Strict, Path=/api/auth): `POST /api/auth/refresh` trades it for a new access token and a rotated cookie; `POST /api/auth/logout` revokes it.'
  }
} as const

/** Operations that take the `svc_refresh` cookie as their credential (docs/interface.md §5.6). */
const COOKIE_OPERATIONS = new Set(['/api/auth/refresh', '/api/auth/logout'])

/**
 * Security requirements of a route from its guard (docs/interface.md §4 "Auth"): J → a
 * session; A → any of the three, a key or agent token holding the scope and the write
 * scope, if any (OpenAPI 3.1 §4.8.30: role names for non-OAuth schemes, all required);
 * key only → an API key; N → none.
 */
function securityOf(guard: Partial<RouteGuard> | undefined, url = ''): Array<Record<string, string[]>> {
  const scopes = [guard?.scope, guard?.write_scope].filter(s => s !== undefined)
  // The cookie is optional: without one, refresh answers a null body and logout a 204 (docs/interface.md §4).
  if (COOKIE_OPERATIONS.has(url)) return [{ refresh_cookie: [] }, {}]
  switch (guard?.auth) {
    case 'jwt':
      return [{ session: [] }]
    case 'api_key':
      return [{ api_key: scopes }]
    case 'any':
      return [{ session: [] }, { api_key: scopes }, { agent_token: scopes }]
    default:
      return []
  }
}

/** Every tag an operation may carry, with what it groups (OpenAPI 3.1 §4.8.22). */
const TAGS = [
  {
    name: 'Verification jobs',
    description: 'One address verified as an asynchronous job: submit, then read the result (`wait` answers as soon as it ends) or receive a webhook.'
  },
  {
    name: 'Batches',
    description: 'A list verified as a batch, sent in one or more chunks; progress, results by verdict and reason, and per-address results (JSON pages or CSV).'
  },
  {
    name: 'API keys',
    description: 'Keys for servers and scripts (`svc_…` live, `svc_test_…` sandbox), each with its scopes and checks; the raw key is shown once.'
  },
  { name: 'Agents', description: 'Named, revocable credentials for automation with scopes of their own (`sva_…`), managed with a session.' },
  { name: 'Webhooks', description: "Signed deliveries of `job.completed` and `batch.completed` to the account's endpoints, with their delivery log." },
  { name: 'Wallet', description: 'The token balance, its history and every transaction (reservations, captures, releases, grants), groupable by job.' },
  { name: 'Billing', description: "The subscription, hosted checkout and portal (Stripe), and Stripe's signed webhook." },
  {
    name: 'Authentication',
    description: 'Sign-up with a mailed code, sign-in (with a second factor when on), refresh through the `svc_refresh` cookie, sign-out, password recovery.'
  },
  { name: 'Account', description: 'The signed-in account: profile, locale, email and password changes, two-factor authentication, sessions, deletion.' },
  { name: 'Statistics', description: 'Usage over time by verdict, check usage and totals for the account, and public all-time figures.' },
  { name: 'Notifications', description: "The account's feed of events worth knowing (keys created, plan changes, a low balance…), cursor-paged." },
  {
    name: 'OAuth',
    description:
      'An OAuth 2.1 authorization server (authorization code with PKCE, dynamic client registration, revocation) for assistants acting for an account.'
  },
  { name: 'MCP', description: 'The Model Context Protocol endpoint for AI assistants: verification and reading tools over JSON-RPC.' },
  { name: 'Service', description: 'Liveness, readiness, the public configuration (plans, prices, check costs) and this document.' },
  { name: 'Reference', description: 'What results and problems mean, for people: the result vocabulary and one page per problem type.' }
] as const

const header = (description: string, schema: Record<string, unknown> = { type: 'string' }): Record<string, unknown> => ({ ...schema, description })
/** `RateLimit-*` (IETF draft, as `@fastify/rate-limit` sends them) on every answer to a limited caller. */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': header(
    "requests allowed in the current window: an API key's, agent's or OAuth grant's own, all the sessions of an account together (ten times the plan's rate), public reads per client",
    { type: 'integer' }
  ),
  'RateLimit-Remaining': header('requests left in the current window', { type: 'integer' }),
  'RateLimit-Reset': header('seconds until the window starts again', { type: 'integer' })
}
const RETRY_AFTER = { 'Retry-After': header('seconds to wait before trying again (RFC 9110 §10.2.3)', { type: 'integer' }) }
const SET_REFRESH = {
  'Set-Cookie': header('`svc_refresh=<refresh token>`: HttpOnly, SameSite=Strict, Path=/api/auth, Secure except on plain local HTTP; rotated on every refresh')
}
const CLEAR_REFRESH = { 'Set-Cookie': header('`svc_refresh=` expired: the browser drops the refresh cookie') }
const LOCATION = { Location: header('the path of the job or batch created', { type: 'string', format: 'uri-reference' }) }
/** On a read whose `wait` was not honoured: answered at once, as `wait=0`, because too many reads of the account or of the service were waiting. */
const WAIT_REFUSED = {
  'Wait-Refused': header(
    'present when the `wait` asked for was not honoured: the answer is the state now, as `wait=0` gives it, because the account (`account_limit`) or the service (`service_limit`) already had as many reads waiting as it may; ask again later',
    { type: 'string', enum: ['account_limit', 'service_limit'] }
  )
}

/** On a write's answer given before the read models had applied it (the read-your-writes wait gave up after 5 s). */
const READ_YOUR_WRITES = {
  'Read-Your-Writes': header(
    'present (`timeout`) when the answer went out before the read models had applied this write (they were late for 5 s): a read made at once may not show it yet; read again in a moment',
    { type: 'string', enum: ['timeout'] }
  )
}

/** Headers particular operations send, by operation id and status. */
const OPERATION_HEADERS: Readonly<Record<string, Readonly<Record<string, Record<string, unknown>>>>> = {
  submitJob: {
    202: LOCATION,
    200: {
      ...LOCATION,
      'Idempotent-Replayed': header('`true` when the answer replays an earlier submission with the same `Idempotency-Key`', { type: 'string', enum: ['true'] })
    }
  },
  createBatch: { 202: LOCATION },
  getVerification: { 200: WAIT_REFUSED },
  getJob: { 200: WAIT_REFUSED },
  getBatch: { 200: WAIT_REFUSED },
  confirm: { 200: SET_REFRESH },
  login: { 200: SET_REFRESH },
  verifyTwoFactor: { 200: SET_REFRESH },
  refresh: { 200: SET_REFRESH, 401: CLEAR_REFRESH },
  logout: { 204: CLEAR_REFRESH },
  mcp: { 401: { 'WWW-Authenticate': header('`Bearer resource_metadata="<base>/.well-known/oauth-protected-resource/mcp"` (RFC 9728 §5.1)') } },
  oauthAuthorize: { 302: { Location: header('the consent page, carrying the signed request', { type: 'string', format: 'uri-reference' }) } }
}
/** Operations that take a form (`application/x-www-form-urlencoded`) rather than JSON. */
const FORM_OPERATIONS = new Set(['oauthToken', 'oauthRevoke', 'oauthConsent'])

/** Status names for response descriptions the routes leave generic. */
const STATUS_NAMES: Readonly<Record<string, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  302: 'Found (a redirect)',
  405: 'Method not allowed'
}

/** Component schemas no `$ref` of the document names (zod's input twins of output schemas, …), removed until none is left. */
function dropUnusedSchemas(document: Record<string, any>): void {
  const schemas = document.components?.schemas as Record<string, unknown> | undefined
  if (!schemas) return
  for (;;) {
    const text = JSON.stringify({
      ...document,
      components: { ...document.components, schemas: Object.fromEntries(Object.entries(schemas).map(([k, v]) => [k, v])) }
    })
    const used = new Set([...text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map(m => decodeURIComponent(m[1])))
    const unused = Object.keys(schemas).filter(k => !used.has(k))
    if (unused.length === 0) return
    for (const k of unused) delete schemas[k]
  }
}

/**
 * The interface described: `GET /openapi.json`, an OpenAPI 3.1.0 document generated from the routes' zod
 * schemas (`@fastify/swagger` with `fastify-type-provider-zod`'s transforms), each
 * operation with its security and scope, every header it sends, its form bodies, a real
 * description on every response, every tag described, the server it is served from, and
 * no unused schema; and `GET /docs`, Swagger UI served from the package's own files (no
 * asset from outside the service; the online validator badge is off). `baseUrl` names the
 * server (configuration only). Register before the routes.
 */
export async function openapiPlugin(app: FastifyInstance, baseUrl: () => string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Email Verification Service',
        version: API_VERSION,
        description:
          'Tells a sender, before any mail goes out, whether an address will accept mail, why, and how sure we are. Errors are RFC 9457 problem details (`application/problem+json`) with a machine `code`; each problem `type` is a page saying what it means (`/problems/<code>`). What each verdict, reason, flag and check means, and what to do about it: `/reference/results`.',
        license: { name: 'MIT', identifier: 'MIT' }
      },
      components: { securitySchemes: SECURITY_SCHEMES },
      tags: TAGS.map(t => ({ ...t }))
    },
    transform: document => {
      const out = jsonSchemaTransform(document)
      const guard = document.route.config as Partial<RouteGuard> | undefined
      const schema = out.schema as Record<string, any>
      if (schema.hide === true) return out
      schema.security = securityOf(guard, document.route.url)
      if (guard?.scope) {
        schema['x-required-scope'] = guard.scope
        const also = guard.write_scope ? ` and, as it changes something, the write scope \`${guard.write_scope}\`` : ''
        schema.description = `${typeof schema.description === 'string' ? `${schema.description}\n\n` : ''}A key or agent token needs the scope \`${guard.scope}\`${also}.`
      }
      if (FORM_OPERATIONS.has(schema.operationId)) schema.consumes = ['application/x-www-form-urlencoded']
      schema.description ??= schema.summary
      const methods = ([] as string[]).concat(document.route.method)
      const limited =
        guard?.auth === 'any' ||
        guard?.auth === 'api_key' ||
        guard?.auth === 'jwt' ||
        (guard?.auth === 'none' && (methods.includes('GET') || document.route.url === '/api/auth/logout'))
      for (const [status, response] of Object.entries((schema.response ?? {}) as Record<string, Record<string, any>>)) {
        const headers = {
          ...(limited ? RATE_LIMIT_HEADERS : {}),
          ...(status === '429' ? RETRY_AFTER : {}),
          ...(!methods.includes('GET') && status.startsWith('2') ? READ_YOUR_WRITES : {}),
          ...(OPERATION_HEADERS[schema.operationId]?.[status] ?? {})
        }
        if (Object.keys(headers).length > 0) response.headers = { ...(response.headers ?? {}), ...headers }
        if (response.description === undefined || response.description === 'Default Response')
          response.description = `${STATUS_NAMES[status] ?? status}: ${String(schema.summary ?? '').replace(/\.$/, '')}`
      }
      return out
    },
    transformObject: input => {
      const document = jsonSchemaTransformObject(input) as Record<string, any>
      document.servers = [{ url: baseUrl(), description: 'this service (PUBLIC_URL, or where it listens)' }]
      document.info = { ...document.info, contact: { name: 'The operator of this service', url: `${baseUrl()}/docs` } }
      const used = new Set(Object.values(document.paths ?? {}).flatMap((ops: any) => Object.values(ops).flatMap((op: any) => op.tags ?? [])))
      const undescribed = [...used].filter(tag => !TAGS.some(t => t.name === tag))
      if (undescribed.length > 0) throw new Error(`tags without a description in TAGS: ${undescribed.join(', ')}`)
      for (const ops of Object.values(document.paths ?? {}) as Array<Record<string, any>>) {
        for (const op of Object.values(ops)) {
          for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Record<string, any>>)) {
            if (response.description === 'Default Response')
              response.description = `${STATUS_NAMES[status] ?? status}: ${String(op.summary ?? '').replace(/\.$/, '')}`
            // Each error status shows a problem of its own (not one example shared by all).
            const problem = response.content?.['application/problem+json']
            if (problem && PROBLEM_EXAMPLES[Number(status)]) problem.example = PROBLEM_EXAMPLES[Number(status)]
          }
        }
      }
      dropUnusedSchemas(document)
      return document as ReturnType<typeof jsonSchemaTransformObject>
    }
  })
  app.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger())
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { validatorUrl: null, deepLinking: true, docExpansion: 'list' },
    staticCSP: true,
    transformStaticCSP: docsPolicy
  })
}

/** Sources a /docs policy keeps: this origin, the page's own hashes and nonces, inline `data:` images and fonts, and keywords. */
const OWN_SOURCE = /^('self'|'none'|'sha(256|384|512)-[A-Za-z0-9+/=]+'|'nonce-[A-Za-z0-9+/=]+'|data:)$/

/**
 * The policy of `/docs` and its assets: swagger-ui's own (`staticCSP`, which keeps the
 * hashes of its inline script and style) with every other origin taken out — its
 * `validator.swagger.io` images and `https:` fonts and styles — so the page loads nothing
 * from anywhere but this service; framed nowhere (`frame-ancestors 'none'`, as the API and
 * the console); without `upgrade-insecure-requests`, which turns this service's own assets
 * into https requests on a plain-HTTP host that is not loopback (TLS is the proxy's, in
 * front). A directive left with no source is `'none'`.
 */
function docsPolicy(header: string | number | string[]): string {
  const directives = String(header)
    .split(';')
    .map(d => d.trim().split(/\s+/))
    .filter(([name]) => name !== '' && name !== 'upgrade-insecure-requests' && name !== 'frame-ancestors')
    .map(([name, ...sources]) => {
      const own = sources.filter(v => OWN_SOURCE.test(v))
      return `${name} ${own.length > 0 ? own.join(' ') : "'none'"}`
    })
  return [...directives, "frame-ancestors 'none'", "form-action 'self'"].join('; ')
}
