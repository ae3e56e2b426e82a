import t from 'tap'
import Fastify, { type FastifyReply } from 'fastify'
import { z } from 'zod'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { checkResponses } from '../support/response-check.ts'
import { registerErrorHandling } from '../../src/http/plugins/errors.ts'
import { problems, json } from '../../src/http/schemas.ts'

// The test build's response check can fail: a field added or renamed without its schema,
// an undeclared status, a body on a 204 each turn the answer into a 500.
const violations: string[] = []
const app = Fastify()
app.setValidatorCompiler(validatorCompiler)
app.setSerializerCompiler(serializerCompiler)
registerErrorHandling(app)
checkResponses(violations)(app)
const Thing = z.object({ name: z.string(), size: z.number() })
const answers: Record<string, () => unknown> = {
  ok: () => ({ name: 'a', size: 1 }),
  added: () => ({ name: 'a', size: 1, colour: 'red' }),
  renamed: () => ({ name: 'a', sizes: 1 })
}
app.withTypeProvider<ZodTypeProvider>().route({
  method: 'GET',
  url: '/thing/:kind',
  schema: { params: z.object({ kind: z.string() }), response: { 200: json(Thing, 'a thing'), 204: z.undefined(), ...problems(404) } },
  handler: async (request, typed) => {
    const reply = typed as unknown as FastifyReply
    const kind = request.params.kind
    if (kind === 'undeclared') return reply.code(202).send({ name: 'a', size: 1 })
    if (kind === 'empty') return reply.code(204).send()
    if (kind === 'missing')
      return reply.code(404).type('application/problem+json').send({ type: 'x', title: 'Not Found', status: 404, detail: 'd', code: 'thing.not_found' })
    return answers[kind]() as z.infer<typeof Thing>
  }
})
await app.ready()
t.teardown(() => app.close())

t.test('answers that match their schema pass untouched', async t => {
  for (const kind of ['ok', 'empty', 'missing']) {
    const r = await app.inject({ method: 'GET', url: `/thing/${kind}` })
    t.not(r.statusCode, 500, kind)
  }
  t.same(violations, [])
})

t.test('a field added without its schema, a renamed one, an undeclared status: 500', async t => {
  for (const kind of ['added', 'renamed', 'undeclared']) {
    const r = await app.inject({ method: 'GET', url: `/thing/${kind}` })
    t.equal(r.statusCode, 500, kind)
    t.equal(r.json().code, 'response.schema_violation', kind)
  }
  t.match(violations.join('\n'), /colour/, 'the added field is named')
  t.match(violations.join('\n'), /required property 'size'/, 'the renamed one is missed')
  t.match(violations.join('\n'), /no schema declared for status 202/)
})
