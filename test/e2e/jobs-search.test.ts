import t from 'tap'
import { build, signUp } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// GET /api/jobs?search=<address> (issue 47 item 8): an address's jobs, whatever its case or
// its domain's form (Unicode or A-labels, RFC 5891), of the caller's account only, in the
// caller's environment, found by a blind index (nothing unsealed to search); a uuid prefix
// still works. The oracle: the jobs this test submitted, read back one by one.
const { api, dataDir } = await build(t)
const ada = await signUp(api, dataDir, 'ada@example.com')
const bob = await signUp(api, dataDir, 'bob@example.com')
const key = async (token: string, environment: 'live' | 'test'): Promise<string> =>
  (await api('POST', '/api/keys', { token, body: { name: environment, environment } })).body.raw_key as string
const adaTest = await key(ada, 'test')
const adaLive = await key(ada, 'live')
const bobTest = await key(bob, 'test')

const submit = async (token: string, email: string): Promise<string> => {
  const r = await api('POST', '/api/verify', { token, body: { email, checks: ['syntax'] } })
  if (r.status !== 202) throw new Error(`${r.status} ${JSON.stringify(r.body)}`)
  return r.body.uuid as string
}
const mine = {
  unicode: await submit(adaTest, 'Jane@Bücher.net'),
  ascii: await submit(adaTest, 'jane@xn--bcher-kva.net'),
  other: await submit(adaTest, 'john@bücher.net'),
  live: await submit(adaLive, 'jane@bücher.net')
}
const theirs = await submit(bobTest, 'jane@bücher.net')
await waitUntil(async () => (await api('GET', '/api/jobs?limit=100', { token: ada })).body.total === 4)

const found = async (token: string, query: string): Promise<string[]> => {
  const r = await api('GET', `/api/jobs?limit=100&${query}`, { token })
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`)
  t.equal(r.body.total, r.body.items.length, `${query}: the total counts what is listed`)
  return (r.body.items as Array<{ uuid: string }>).map(j => j.uuid).sort()
}

t.test("an address finds its jobs: any case, either form of its domain, the caller's account and environment only", async t => {
  for (const spelling of ['jane@bücher.net', 'JANE@BÜCHER.NET', 'jane@xn--bcher-kva.net', '  Jane@Bücher.net  '])
    t.same(await found(adaTest, `search=${encodeURIComponent(spelling)}`), [mine.unicode, mine.ascii].sort(), `"${spelling}": both of Ada's test jobs`)
  t.same(await found(ada, `search=${encodeURIComponent('jane@bücher.net')}&environment=live`), [mine.live], "the session naming live: Ada's live job")
  t.same(await found(bobTest, `search=${encodeURIComponent('jane@bücher.net')}`), [theirs], "Bob's key: Bob's job, never Ada's")
  t.same(await found(adaTest, `search=${encodeURIComponent('nobody@bücher.net')}`), [], 'an address never submitted: nothing')
  t.same(await found(adaTest, `search=${encodeURIComponent('john@bücher.net')}&status=completed`), [mine.other], 'with a filter')
  t.same(await found(adaTest, `search=${mine.other.slice(0, 30).toUpperCase()}`), [mine.other], 'a uuid prefix still works (positive control)')
  const bad = await api('GET', '/api/jobs?search=not%20a%20uuid', { token: adaTest })
  t.same([bad.status, bad.body.code], [400, 'list_jobs.invalid_query'], 'neither a uuid prefix nor an address: 400')
})
