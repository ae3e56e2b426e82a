import t from 'tap'
import { pino } from 'pino'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { RouteOptions } from 'fastify'
import { startService } from '../../src/main.ts'
import { testConfig } from '../support/service.ts'

// `GET /openapi.json`: a valid OpenAPI 3.1 document,
// version 0.9.0, listing every route the app registers with the credentials and the scope
// its configuration asks for. Its agreement with the interface document
// (service-interface.md beside the checkout: each operation's Auth and named scope) is npm run eval's.

const routes: RouteOptions[] = []
const service = await startService(testConfig(t.testdir()), {
  logger: pino({ level: 'silent' }),
  instrument: app => {
    app.addHook('onRoute', r => {
      routes.push(r)
    })
  }
})
t.teardown(() => service.close())
const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
  openapi: string
  info: { version: string }
  components: { securitySchemes: Record<string, unknown> }
  paths: Record<
    string,
    Record<string, { security: Array<Record<string, string[]>>; 'x-required-scope'?: string; operationId?: string; responses: Record<string, unknown> }>
  >
}
const openapiPath = (url: string): string => url.replace(/:([a-z_]+)/g, '{$1}')
const documented = routes.filter(r => r.schema?.hide !== true && !/^\/(docs|openapi\.json|metrics)/.test(r.url))

t.test('a valid OpenAPI 3.1.0 document, version 0.9.0, with the three credential kinds', async t => {
  const validator = new Validator()
  const result = await validator.validate(doc)
  t.ok(result.valid, `valid against the OpenAPI ${validator.version} schema: ${JSON.stringify(result.errors ?? []).slice(0, 600)}`)
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.info.version, '0.9.0')
  t.same(
    Object.keys(doc.components.securitySchemes).sort(),
    ['agent_token', 'api_key', 'refresh_cookie', 'session'],
    'the three credentials, and the svc_refresh cookie'
  )
})

t.test('every route the app registers is an operation with its security and scope', async t => {
  t.ok(documented.length >= 30, `${documented.length} routes`)
  const operations = new Set<string>()
  for (const r of documented) {
    for (const method of ([] as string[]).concat(r.method)) {
      if (method === 'HEAD') continue
      const op = doc.paths[openapiPath(r.url)]?.[method.toLowerCase()]
      const name = `${method} ${r.url}`
      operations.add(`${method} ${openapiPath(r.url)}`)
      if (!op) {
        t.fail(`${name} is not in the document`)
        continue
      }
      const guard = r.config as { auth: string; scope?: string; write_scope?: string }
      const schemes = op.security.flatMap(s => Object.keys(s)).sort()
      const cookie = r.url === '/api/auth/refresh' || r.url === '/api/auth/logout'
      const expected = cookie
        ? ['refresh_cookie']
        : { none: [], jwt: ['session'], api_key: ['api_key'], any: ['agent_token', 'api_key', 'session'] }[guard.auth]
      t.same(schemes, expected, `${name}: security of auth ${guard.auth}`)
      t.equal(op['x-required-scope'], guard.scope, `${name}: scope`)
      for (const s of op.security.filter(s => Object.keys(s).length > 0)) {
        const [scheme, scopes] = Object.entries(s)[0]
        if (scheme !== 'session') t.same(scopes, [guard.scope, guard.write_scope].filter(Boolean), `${name}: ${scheme} needs the scope (and the write scope)`)
      }
      t.ok(op.operationId, `${name}: an operationId`)
      t.ok(op.responses['500'], `${name}: its error answers are described`)
    }
  }
  const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map(m => `${m.toUpperCase()} ${path}`))
  t.same(listed.sort(), [...operations].sort(), 'and nothing else')
})
