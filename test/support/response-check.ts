import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { z } from 'zod'
import { HttpProblem, problem } from '../../src/http/problem.ts'

// The test build's check of every answer against the schema its route declares for that
// status: an undeclared status, a missing or mistyped
// field, or a field the schema does not name turns the answer into a 500
// `response.schema_violation`, so the test that made the request fails. Extra fields are
// caught before serialization (the production serializer strips them silently).

type Declared = z.ZodType | { content: Record<string, { schema: z.ZodType }> }
const SKIPPED = /^\/(docs|openapi\.json|metrics)/

/** The zod schema a route declares for `status` and the reply's content type, or why there is none. */
function declaredSchema(request: FastifyRequest, status: number, contentType: string): z.ZodType | string {
  const responses = (request.routeOptions.schema?.response ?? {}) as Record<string, Declared>
  const entry = responses[status]
  if (!entry) return `no schema declared for status ${status}`
  if (entry instanceof z.ZodType) return entry
  const type = contentType.split(';')[0].trim()
  return entry.content[type]?.schema ?? `no schema declared for ${status} ${type}`
}

/** Installs the check on an app (`startService(…, { instrument })`); every violation is also pushed to `violations`. */
export function checkResponses(violations: string[]): (app: FastifyInstance) => void {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
  const compiled = new WeakMap<z.ZodType, ValidateFunction>()
  const validator = (schema: z.ZodType): ValidateFunction => {
    let v = compiled.get(schema)
    if (!v) {
      // Output mode: objects get `additionalProperties: false`, so an undeclared field fails.
      const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>
      v = ajv.compile(json)
      compiled.set(schema, v)
    }
    return v
  }
  const violation = (request: FastifyRequest, status: number, what: string): string => {
    const text = `${request.method} ${request.routeOptions.url} → ${status}: ${what}`
    violations.push(text)
    process.stderr.write(`response schema violation: ${text}\n`)
    return text
  }
  return app => {
    app.addHook('preSerialization', async (request, reply, payload) => {
      if (!request.routeOptions.url || SKIPPED.test(request.routeOptions.url) || payload === null || typeof payload !== 'object') return payload
      const schema = declaredSchema(request, reply.statusCode, String(reply.getHeader('content-type') ?? 'application/json'))
      if (typeof schema === 'string') throw new HttpProblem(500, 'response.schema_violation', violation(request, reply.statusCode, schema))
      const validate = validator(schema)
      if (!validate(payload)) {
        const what = (validate.errors ?? [])
          .map(
            e =>
              `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`
          )
          .join('; ')
        throw new HttpProblem(500, 'response.schema_violation', violation(request, reply.statusCode, what))
      }
      return payload
    })
    app.addHook('onSend', async (request, reply, payload) => {
      // CORS preflights are answered by @fastify/cors's own wildcard route, before any handler.
      if (!request.routeOptions.url || SKIPPED.test(request.routeOptions.url) || request.method === 'OPTIONS') return payload
      const schema = declaredSchema(request, reply.statusCode, String(reply.getHeader('content-type') ?? 'application/json'))
      const empty = payload === undefined || payload === null || payload === ''
      const what = typeof schema === 'string' ? schema : reply.statusCode === 204 && !empty ? 'a 204 with a body' : null
      if (what === null) return payload
      const text = violation(request, reply.statusCode, what)
      reply.code(500).type('application/problem+json')
      return JSON.stringify(problem(500, 'response.schema_violation', text))
    })
  }
}
