import t from 'tap'
import { parse } from 'csv-parse/sync'
import { client, signUp, startTestService, testConfig } from '../../support/service.ts'
import { plansFile } from '../../support/plans.ts'

// A kept file outlives its plan: a file kept
// under a plan that allowed its 20,000 rows is downloaded after the plan allows fewer (the
// account's plan changed, here the catalogue's). The upload held it to its plan's bounds;
// the download reads it back within the widest plan's. The oracle: the rows the test
// uploaded, read back with a CSV parser.
const dataDir = t.testdir()
const wide = plansFile(dataDir, { free: { max_batch_size: 20_000, max_chunk_size: 20_000 } }, 'wide.json')
let service = await startTestService(testConfig(dataDir, { PLANS_FILE: wide }))
let api = client(service.url)
const token = await signUp(api, dataDir, 'downgraded@example.com')

t.test('a file kept under a larger plan is downloaded whole after a downgrade', async t => {
  const emails = Array.from({ length: 20_000 }, (_, i) => `valid.${i}@downgrade.example.com`)
  const created = await api('POST', '/api/batches', { token, body: { emails: emails.slice(0, 10), final: true } })
  t.equal(created.status, 202)
  const csv = `email\n${emails.join('\n')}\n`
  const put = await fetch(`${service.url}/api/batches/${created.body.uuid}/source`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
    body: csv
  })
  t.equal(put.status, 201, 'kept under a plan of 20,000 addresses a batch')
  await service.close()
  service = await startTestService(testConfig(dataDir))
  api = client(service.url)
  const free = (await api('GET', '/api/config')).body.plans.find((p: { code: string }) => p.code === 'free').limits
  t.ok(free.max_batch_size * 2 + 10_000 < 20_001, 'the plan now allows fewer rows than the file holds')
  const r = await fetch(`${service.url}/api/batches/${created.body.uuid}/source`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(r.status, 200)
  const rows = parse(await r.text(), { columns: true }) as Array<{ email: string; row_status: string }>
  t.equal(rows.length, 20_000, 'every row')
  t.same(
    rows.map(row => row.email),
    emails,
    'in order'
  )
  t.equal(rows.filter(row => row.row_status === 'verified').length, 10, 'the batch’s addresses with their results')
})

t.teardown(() => service.close())
