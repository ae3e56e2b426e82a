import createFetchClient, { type Client, type Middleware } from 'openapi-fetch'
import type { paths } from './generated/schema.d.ts'

export type { paths, components, operations } from './generated/schema.d.ts'

/** The service's API, typed from its OpenAPI document: `client.GET('/api/verify/{uuid}', { params: { path: { uuid } } })`. */
export type ApiClient = Client<paths>

/**
 * A client of the public API, its types generated from the service's OpenAPI document by
 * the build (`scripts/build.ts`, openapi-typescript; never edited by hand), its calls made
 * by `openapi-fetch`. `token` is sent as `Authorization: Bearer` (an API key, an agent
 * token or a session's access token; a function is asked before each request, so a
 * session can refresh it). `fetch` replaces the global one (tests, proxies).
 */
export function createClient(options: { baseUrl: string; token?: string | (() => string | null | undefined); fetch?: typeof globalThis.fetch }): ApiClient {
  const client = createFetchClient<paths>({ baseUrl: options.baseUrl.replace(/\/$/, ''), ...(options.fetch && { fetch: options.fetch }) })
  const bearer: Middleware = {
    onRequest({ request }) {
      const token = typeof options.token === 'function' ? options.token() : options.token
      if (token) request.headers.set('authorization', `Bearer ${token}`)
      return request
    }
  }
  if (options.token !== undefined) client.use(bearer)
  return client
}
