import t from 'tap'
import { signUp, build } from '../support/service.ts'

// Read your writes, bounded: a write's answer waits up to
// 5 s for the read models to apply it. When they are late it goes out anyway, and says so:
// `Read-Your-Writes: timeout`, and `read_your_writes_timeouts_total` counts it. The read
// models are made late here by stopping the projection runner (as a stalled projector
// would be); the oracle is the answer's header, the metric and a read made afterwards.

const TOKEN = 'ryw-metrics-token-0123456789'
const { dataDir, service, api } = await build(t, { METRICS_TOKEN: TOKEN })
const token = await signUp(api, dataDir, 'ryw@example.com')

const timeouts = async (): Promise<number> => {
  const text = await (await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text()
  const line = text.split('\n').find(l => l.startsWith('read_your_writes_timeouts_total'))
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : Number.NaN
}

t.test('a write the read models have not applied within 5 s is answered, marked and counted', async t => {
  const before = await timeouts()
  const inTime = await api('PATCH', '/api/users/me/locale', { token, body: { locale: 'fr' } })
  t.equal(inTime.status, 204, 'a write while the read models keep up (positive control)')
  t.equal(inTime.headers.get('read-your-writes'), null, 'carries no mark')
  t.equal(await timeouts(), before, 'and counts nothing')

  await service.runner?.stop()
  const started = Date.now()
  const late = await api('PATCH', '/api/users/me/locale', { token, body: { locale: 'en' } })
  const waited = Date.now() - started
  t.equal(late.status, 204, 'the write is answered')
  t.ok(waited >= 4_900, `after the wait's bound (${waited} ms)`)
  t.equal(late.headers.get('read-your-writes'), 'timeout', 'marked Read-Your-Writes: timeout')
  t.equal(await timeouts(), before + 1, 'counted once')
  t.equal((await api('GET', '/api/users/me', { token })).body.locale, 'fr', 'a read right after does not show it yet: what the mark warns of')
})
