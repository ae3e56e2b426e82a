import t from 'tap'
import { client } from '../support/service.ts'
import { npmStartNodeFlags, startSvc, svcEnv } from '../support/processes.ts'
import { loadConfig } from '../../src/config.ts'

// Per-client limits behind a TLS proxy (issue 42, item 12a): every request comes from the
// proxy's address, so without trusting it every client shares one counter. `TRUST_PROXY`
// names the proxies whose X-Forwarded-For is believed (fastify's trustProxy); by default
// nobody's, so a forged header changes nothing. The oracle is the sign-in throttle's own
// answer (20 failed sign-ins per client per 15 minutes, then 429 login.too_many_attempts;
// docs/security.md), read over HTTP from the service as `npm start` runs it; the test's
// requests come from 127.0.0.1, the "proxy".

const LIMIT = 20
const wrongSignIn = (api: ReturnType<typeof client>, from: string | null, n: number) =>
  api('POST', '/api/auth/login', {
    body: { email: `nobody-${n}@example.com`, password: 'not the password at all' },
    headers: from === null ? {} : { 'x-forwarded-for': from }
  })

/** `count` failed sign-ins "from" `from` (each for another address: the per-address lock stays out of it). */
async function fail(api: ReturnType<typeof client>, from: string | null, count: number, offset: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < count; i++) statuses.push((await wrongSignIn(api, from, offset + i)).status)
  return statuses
}

t.test('TRUST_PROXY: each forwarded client has its own sign-in counter', async t => {
  const dir = t.testdir()
  const service = await startSvc(t, ['serve'], svcEnv(dir, { TRUST_PROXY: '127.0.0.1' }), npmStartNodeFlags())
  const api = client(service.url)
  t.same(await fail(api, '203.0.113.7', LIMIT, 0), Array(LIMIT).fill(401), `${LIMIT} failed sign-ins from 203.0.113.7`)
  const over = await wrongSignIn(api, '203.0.113.7', 100)
  t.equal(over.status, 429, 'its next one is refused (the positive control)')
  t.equal(over.body.code, 'login.too_many_attempts')
  const other = await wrongSignIn(api, '198.51.100.9', 101)
  t.equal(other.status, 401, 'another client behind the same proxy is judged, not refused')
  // The client is the rightmost address the proxy did not add itself: a client's own X-Forwarded-For is not believed.
  const forged = await wrongSignIn(api, '198.51.100.10, 203.0.113.7', 102)
  t.equal(forged.status, 429, 'a client (203.0.113.7) that prepends another address is still itself')
  t.equal((await wrongSignIn(api, null, 103)).status, 401, 'the proxy itself (no header) is a client of its own')
})

t.test('without TRUST_PROXY: a forged X-Forwarded-For changes nothing', async t => {
  const dir = t.testdir()
  const service = await startSvc(t, ['serve'], svcEnv(dir), npmStartNodeFlags())
  const api = client(service.url)
  const statuses = [...(await fail(api, '203.0.113.7', LIMIT / 2, 0)), ...(await fail(api, '198.51.100.9', LIMIT / 2, 50))]
  t.same(statuses, Array(LIMIT).fill(401), `${LIMIT} failed sign-ins, half "from" each of two forged addresses`)
  const next = await wrongSignIn(api, '192.0.2.33', 100)
  t.equal(next.status, 429, 'all were counted against the real peer: a third forged address is refused too')
  t.equal(next.body.code, 'login.too_many_attempts')
})

t.test('TRUST_PROXY is read as fastify reads a list; true and hop counts are refused', async t => {
  const base = { DATA_DIR: t.testdir() }
  t.same(loadConfig({ ...base }).trust_proxy, false, 'unset: nobody')
  t.same(loadConfig({ ...base, TRUST_PROXY: 'false' }).trust_proxy, false)
  t.same(loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, 192.0.2.1,loopback,fd00::/8' }).trust_proxy, ['10.0.0.0/8', '192.0.2.1', 'loopback', 'fd00::/8'])
  t.throws(() => loadConfig({ ...base, TRUST_PROXY: 'true' }), /TRUST_PROXY/, 'true: any client would name its own address')
  t.throws(() => loadConfig({ ...base, TRUST_PROXY: '1' }), /TRUST_PROXY/, 'a hop count cannot tell a proxy from a client')
  t.throws(() => loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/99' }), /TRUST_PROXY/, 'not a range')
  t.throws(() => loadConfig({ ...base, TRUST_PROXY: 'proxy.example.com' }), /TRUST_PROXY/, 'names are not resolved')
})
