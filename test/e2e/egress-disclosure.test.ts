import t from 'tap'
import { startDnsRelay } from '../support/dns-relay.ts'
import socks from 'simple-socks'
import type { AddressInfo, Server } from 'node:net'
import { startMailWorld } from '../support/mail-world.ts'
import { client, settled, signUp } from '../support/service.ts'
import { npmStartNodeFlags, startSvc, svcEnv } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// Operators' infrastructure is the operator's (issue 42, item 9): a SOCKS5 proxy's host and
// port, the egress self-test's MX and what the resolvers said reach `/readyz` only with the
// metrics token, and never a customer's job. The service runs as `npm start` runs it, with
// a route through a real SOCKS5 proxy on loopback that refuses port 25 (a `proxy_error`),
// its direct default route to the mail world, and a resolver this test can silence. The
// positive controls: the operator's view (`/readyz` with the token, the log) does name
// what the public view must not.

const PROXY_HOST = '127.0.142.2'
const RELAYED_MX = '127.0.142.10'
const SELFTEST_MX = '127.0.142.11'
const SELFTEST_NAME = 'mx.selftest-probe.com'
const world = await startMailWorld({
  dns_ip: '127.0.142.1',
  domains: [{ name: 'relayed-corp.com', mx: [{ preference: 10, exchange: 'mx.relayed-corp.com' }] }],
  hosts: [
    { name: 'mx.relayed-corp.com', ip: RELAYED_MX },
    { name: SELFTEST_NAME, ip: SELFTEST_MX }
  ]
})
t.teardown(() => world.close())

/** The world's resolver behind a relay the test can silence (a dead resolver). */
const dns = await startDnsRelay(t, world.dns_server, '127.0.142.3')

// A SOCKS5 proxy whose own way to the SMTP port is closed: every session through it is a proxy failure.
let refused = 0
const proxy: Server = socks.createServer({
  connectionFilter: (destination, _origin, callback) => {
    if (destination.port === world.smtp_port) refused++
    setImmediate(callback, destination.port === world.smtp_port ? new Error('the SMTP port is closed here') : undefined)
  }
})
await new Promise<void>(resolve => proxy.listen(0, PROXY_HOST, resolve))
t.teardown(() => new Promise<void>(resolve => proxy.close(() => resolve())))
const PROXY_PORT = (proxy.address() as AddressInfo).port

const dataDir = t.testdir()
const METRICS_TOKEN = 'metrics-token-for-the-disclosure-test'
const svc = await startSvc(
  t,
  ['serve'],
  svcEnv(dataDir, {
    METRICS_TOKEN,
    VERIFIER_DNS_SERVERS: dns.server,
    VERIFIER_DNS_TIMEOUT_MS: '300',
    VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
    VERIFIER_SMTP_TIMEOUT_MS: '3000',
    VERIFIER_RESULT_CACHE_TTL_S: '0',
    VERIFIER_SMTP_ROUTES: JSON.stringify([
      { name: 'relayed', proxy: `socks5://${PROXY_HOST}:${PROXY_PORT}`, helo_name: 'relayed.example', mx: ['*.relayed-corp.com'] }
    ]),
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0.5',
    VERIFIER_EGRESS_TEST_MX: SELFTEST_NAME
  }),
  npmStartNodeFlags()
)
const api = client(svc.url)

/** What must not reach anyone but the operator: the proxy's host and port, the self-test MX (name and address). */
const INFRASTRUCTURE: Array<[string, RegExp]> = [
  ['the proxy host', new RegExp(PROXY_HOST.replace(/\./g, '\\.'))],
  ['the proxy port', new RegExp(`\\b${PROXY_PORT}\\b`)],
  ['the self-test MX name', new RegExp(SELFTEST_NAME.replace(/\./g, '\\.'))],
  ['the self-test MX address', new RegExp(SELFTEST_MX.replace(/\./g, '\\.'))]
]
const operator = { authorization: `Bearer ${METRICS_TOKEN}` }

/** `/readyz` once it reports `problem` for egress, with and without the operator's token. */
async function readyzWith(problem: string): Promise<{ public: any; operator: any }> {
  let seen: any = null
  await waitUntil(async () => {
    const r = await api('GET', '/readyz', { headers: operator })
    seen = r.body
    return r.status === 503 && seen.reasons?.some((x: { component: string; problem: string }) => x.component === 'egress' && x.problem === problem)
  }, 20_000)
  const r = await api('GET', '/readyz')
  return { public: r.body, operator: seen }
}

t.test("a proxy that fails: /readyz and the customer's job name no proxy; the operator's view does", async t => {
  const ready = await readyzWith('proxy_failing')
  const text = JSON.stringify(ready.public)
  t.match(ready.public, { status: 'degraded', reasons: [{ component: 'egress', problem: 'proxy_failing' }] }, 'the public answer says why')
  const egress = ready.operator.reasons.find((x: { component: string }) => x.component === 'egress')
  t.match(egress.detail, new RegExp(`${PROXY_HOST.replace(/\./g, '\\.')}:${PROXY_PORT}`), "the operator's answer names the proxy (positive control)")
  t.match(egress.detail, new RegExp(SELFTEST_MX.replace(/\./g, '\\.')), '…and the self-test MX it was asked for')
  t.match(egress.detail, /route relayed/, '…and the route')
  for (const [what, re] of [...INFRASTRUCTURE, ['the route name', /relayed/] as [string, RegExp]]) t.notMatch(text, re, `the public /readyz holds no ${what}`)

  const token = await signUp(api, dataDir, 'disclosure@example.com')
  const key = (await api('POST', '/api/keys', { token, body: { name: 'live', environment: 'live' } })).body.raw_key as string
  const submitted = await api('POST', '/api/verify', { token: key, body: { email: 'someone@relayed-corp.com' } })
  t.equal(submitted.status, 202)
  const job = await settled(api, key, submitted.body.uuid)
  t.equal(job.reason, 'proxy_error', 'the customer sees the reason')
  t.ok(refused >= 1, 'the session did go to the proxy, which refused it')
  const smtp = job.result.checks.find((c: { name: string }) => c.name === 'smtp')
  t.match(smtp, { outcome: 'error', detail: /^proxy_error: / }, 'the smtp check says the way out failed')
  const views = [job, (await api('GET', `/api/jobs/${submitted.body.uuid}`, { token })).body, (await api('GET', '/api/jobs?limit=10', { token })).body]
  t.equal(views[1].uuid, submitted.body.uuid, "the account's own view of the job")
  for (const [what, re] of INFRASTRUCTURE) for (const view of views) t.notMatch(JSON.stringify(view), re, `the customer's job holds no ${what}`)
  // The operator's log says which proxy failed and how (never its credentials: it has none here).
  await waitUntil(() => /egress: a proxy failed a connection/.test(svc.output()), 10_000)
  const line = svc
    .output()
    .split('\n')
    .find(l => l.includes('egress: a proxy failed a connection'))!
  t.match(line, new RegExp(`socks5://${PROXY_HOST.replace(/\./g, '\\.')}:${PROXY_PORT}`), "the operator's log names the proxy (positive control)")
  t.match(JSON.parse(line), { egress: { route: 'relayed' } }, '…and its route')
})

t.test('the resolver stops answering: /readyz says dns_failing, the self-test MX only to the operator', async t => {
  dns.alive = false
  t.teardown(() => {
    dns.alive = true
  })
  const ready = await readyzWith('dns_failing')
  const egress = ready.operator.reasons.find((x: { component: string }) => x.component === 'egress')
  t.match(egress.detail, new RegExp(SELFTEST_NAME.replace(/\./g, '\\.')), "the operator's answer names the MX the self-test asked for (positive control)")
  t.match(ready.public, { status: 'degraded', reasons: [{ component: 'egress', problem: 'dns_failing', detail: null }] }, 'the public answer: the reason only')
  for (const [what, re] of INFRASTRUCTURE) t.notMatch(JSON.stringify(ready.public), re, `the public /readyz holds no ${what}`)
  // A wrong token is anyone's view.
  const wrong = await api('GET', '/readyz', { headers: { authorization: 'Bearer not-the-metrics-token' } })
  t.equal(wrong.status, 503)
  t.notMatch(JSON.stringify(wrong.body), new RegExp(SELFTEST_NAME.replace(/\./g, '\\.')), 'a wrong token sees no detail')
})
