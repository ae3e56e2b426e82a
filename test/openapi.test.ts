import t from 'tap'
import { readFileSync } from 'node:fs'
import { pino } from 'pino'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { RouteOptions } from 'fastify'
import { startService } from '../src/main.ts'
import { testConfig } from './support/service.ts'

// `GET /openapi.json` (issue "The interface described"): a valid OpenAPI 3.1 document,
// version 0.9.0, listing every route the app registers with the credentials and the scope
// its configuration asks for; checked against the interface document itself
// (../shared/spec/service-interface.md: each operation's Auth and named scope).

const routes: RouteOptions[] = []
const service = await startService(testConfig(t.testdir()), { logger: pino({ level: 'silent' }), instrument: app => { app.addHook('onRoute', r => { routes.push(r) }) } })
t.teardown(() => service.close())
const doc = await (await fetch(`${service.url}/openapi.json`)).json() as {
  openapi: string
  info: { version: string }
  components: { securitySchemes: Record<string, unknown> }
  paths: Record<string, Record<string, { security: Array<Record<string, string[]>>, 'x-required-scope'?: string, operationId?: string, responses: Record<string, unknown> }>>
}
const openapiPath = (url: string): string => url.replace(/:([a-z_]+)/g, '{$1}')
const documented = routes.filter(r => r.schema?.hide !== true && !/^\/(docs|openapi\.json|metrics)/.test(r.url))

t.test('a valid OpenAPI 3.1.0 document, version 0.9.0, with the three credential kinds', async t => {
  const validator = new Validator()
  const result = await validator.validate(doc)
  t.ok(result.valid, `valid against the OpenAPI ${validator.version} schema: ${JSON.stringify(result.errors ?? []).slice(0, 600)}`)
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.info.version, '0.9.0')
  t.same(Object.keys(doc.components.securitySchemes).sort(), ['agent_token', 'api_key', 'session'])
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
      if (!op) { t.fail(`${name} is not in the document`); continue }
      const guard = r.config as { auth: string, scope?: string }
      const schemes = op.security.map(s => Object.keys(s)[0]).sort()
      const expected = { none: [], jwt: ['session'], api_key: ['api_key'], any: ['agent_token', 'api_key', 'session'] }[guard.auth]
      t.same(schemes, expected, `${name}: security of auth ${guard.auth}`)
      t.equal(op['x-required-scope'], guard.scope, `${name}: scope`)
      for (const s of op.security) {
        const [scheme, scopes] = Object.entries(s)[0]
        if (scheme !== 'session') t.same(scopes, guard.scope ? [guard.scope] : [], `${name}: ${scheme} needs the scope`)
      }
      t.ok(op.operationId, `${name}: an operationId`)
      t.ok(op.responses['500'], `${name}: its error answers are described`)
    }
  }
  const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map(m => `${m.toUpperCase()} ${path}`))
  t.same(listed.sort(), [...operations].sort(), 'and nothing else')
})

t.test('the operations built match the interface document: their Auth and their scope', async t => {
  const spec = readFileSync(new URL('../../shared/spec/service-interface.md', import.meta.url), 'utf8')
  const rows: Array<{ method: string, path: string, auth: string, scope: string | null }> = []
  let headingAuth = 'N'
  let header: string[] = []
  for (const line of spec.split('\n')) {
    if (line.startsWith('### ')) {
      headingAuth = /\(Auth (J|A)/.exec(line)?.[1] ?? 'N'
      header = []
      continue
    }
    if (!line.startsWith('|')) continue
    const cells = line.split('|').slice(1, -1).map(c => c.trim())
    if (cells[0] === 'Method') { header = cells; continue }
    if (!/^(GET|POST|PUT|PATCH|DELETE)$/.test(cells[0])) continue
    const col = (name: string): string => cells[header.indexOf(name)] ?? ''
    const authCell = header.includes('Auth') ? col('Auth') : headingAuth
    const auth = /bearer API key only/.test(col('Request')) ? 'K' : authCell
    rows.push({ method: cells[0], path: cells[1], auth, scope: /`([a-z_]+:[a-z_:]+)`/.exec(col('Errors'))?.[1] ?? null })
  }
  t.ok(rows.length >= 60, `${rows.length} operations in the interface document`)
  const AUTH: Record<string, string> = { N: 'none', J: 'jwt', A: 'any', K: 'api_key' }
  const built = new Map(documented.flatMap(r => ([] as string[]).concat(r.method).filter(m => m !== 'HEAD').map(m => [`${m} ${openapiPath(r.url)}`, r.config as { auth: string, scope?: string }])))
  const missing: string[] = []
  for (const row of rows) {
    const guard = built.get(`${row.method} ${row.path}`)
    if (!guard) { missing.push(`${row.method} ${row.path}`); continue }
    t.equal(guard.auth, AUTH[row.auth], `${row.method} ${row.path}: Auth ${row.auth}`)
    if (row.auth === 'A' && row.scope) t.equal(guard.scope, row.scope, `${row.method} ${row.path}: scope ${row.scope}`)
  }
  const interfacePaths = new Set(rows.map(r => `${r.method} ${r.path}`))
  const extra = [...built.keys()].filter(k => k.includes(' /api/') && !interfacePaths.has(k))
  t.same(extra, [], 'no /api operation outside the interface')
  t.comment(`not built yet (they join the document as they are built): ${missing.join(', ')}`)
})
