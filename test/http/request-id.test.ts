import t from 'tap'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { startService } from '../../src/main.ts'
import { testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// Request ids: an incoming X-Request-Id that is a plain
// token is kept, another is generated when it is absent or unfit for a log, the answer
// carries it, and each log line of the request names it. The oracle: the service's own
// log lines, captured as written.

const lines: Array<Record<string, unknown>> = []
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const l of chunk.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l))
    done()
  }
})
const service = await startService(testConfig(t.testdir(), { LOG_LEVEL: 'info' }), { logger: pino({ level: 'info' }, sink) })
t.teardown(() => service.close())

const logged = async (id: string): Promise<Array<Record<string, unknown>>> => {
  await waitUntil(() => lines.some(l => l.request_id === id && l.msg === 'request'), 5_000)
  return lines.filter(l => l.request_id === id)
}

t.test('an incoming X-Request-Id is kept, answered and on the log line', async t => {
  const id = 'edge-7f3a.19:42_ab-CD'
  const r = await fetch(`${service.url}/api/users/me`, { headers: { 'x-request-id': id } })
  t.equal(r.status, 401)
  t.equal(r.headers.get('x-request-id'), id, 'the answer carries it')
  const mine = await logged(id)
  t.match(mine, [{ request_id: id, msg: 'request', status: 401, url: '/api/users/me' }])
})

t.test('absent: one is generated, answered and logged', async t => {
  const r = await fetch(`${service.url}/healthz`)
  const id = r.headers.get('x-request-id')
  t.match(id, /^[0-9a-f-]{36}$/, 'a generated id')
  t.ok((await logged(id!)).length >= 1, 'the log line names it')
})

t.test('unfit for a log (too long, or characters that could forge a line): replaced', async t => {
  for (const bad of ['x'.repeat(200), 'a b', 'evil"}\\n{"level":60']) {
    const r = await fetch(`${service.url}/healthz`, { headers: { 'x-request-id': bad } })
    const id = r.headers.get('x-request-id')
    t.not(id, bad)
    t.match(id, /^[0-9a-f-]{36}$/, 'a generated id instead')
    // The request's own line arrived (the positive control) before the absence is asserted.
    await logged(id!)
    t.notOk(
      lines.some(l => l.request_id === bad),
      'the unfit one is never logged'
    )
  }
})
