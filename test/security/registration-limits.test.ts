import t from 'tap'
import { join } from 'node:path'
import { mkdirSync } from 'node:fs'
import { client, startTestService, testConfig } from '../support/service.ts'

// Registration is bounded per client, per address domain and in all: past each limit a 429, and the answers before it are the
// usual 204. The limits here are the test's own (REGISTRATIONS_PER_HOUR_*).
const password = 'correct horse battery staple'

// Each part's DATA_DIR under this file's fixture, removed when the whole file is done (a
// subtest's own fixture would be removed while its service still writes the outbox).
const root = t.testdir()
const dirFor = (name: string): string => {
  const d = join(root, name)
  mkdirSync(d, { recursive: true })
  return d
}

t.test('per client', async t => {
  const service = await startTestService(testConfig(dirFor('per-client'), { REGISTRATIONS_PER_HOUR_PER_CLIENT: '3' }))
  t.teardown(() => service.close())
  const api = client(service.url)
  const statuses: number[] = []
  for (let i = 0; i < 5; i++)
    statuses.push((await api('POST', '/api/auth/register', { body: { email: `c${i}@example${i}.com`, password, locale: 'en' } })).status)
  t.same(statuses, [204, 204, 204, 429, 429])
  const r = await api('POST', '/api/auth/register', { body: { email: 'late@example.com', password, locale: 'en' } })
  t.equal(r.body.code, 'register_user.too_many_requests')
})

t.test('per domain, and in all', async t => {
  const service = await startTestService(testConfig(dirFor('per-domain'), { REGISTRATIONS_PER_HOUR_PER_DOMAIN: '2', REGISTRATIONS_PER_HOUR: '4' }))
  t.teardown(() => service.close())
  const api = client(service.url)
  const domain: number[] = []
  for (let i = 0; i < 3; i++)
    domain.push((await api('POST', '/api/auth/register', { body: { email: `d${i}@same-domain.com`, password, locale: 'en' } })).status)
  t.same(domain, [204, 204, 429], 'a third address of the same domain')
  const all: number[] = []
  for (let i = 0; i < 3; i++) all.push((await api('POST', '/api/auth/register', { body: { email: `a@domain${i}.com`, password, locale: 'en' } })).status)
  t.same(all, [204, 204, 429], 'the global limit counts every registration (two of the four went to same-domain.com)')
})
