import t from 'tap'
import socks from 'simple-socks'
import type { AddressInfo, Server } from 'node:net'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp } from '../support/service.ts'
import { startSvc, svcEnv } from '../support/processes.ts'
import { canMakeNamespaces, isolatedNamespace } from '../support/netns.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// SMTP through SOCKS5 proxies when port 25 is blocked.
// The service runs in a network namespace whose only way out is a veth pair to this one:
// the mail world's SMTP port on this machine's loopback really refuses it (its own loopback
// has nothing listening), DNS stays the service's own (the world's resolver, reached over
// the pair). Two SOCKS5 servers (simple-socks) listen on our end: the default route's,
// with a user and a password, and a `blocked` route's for one domain, which refuses every
// connection to the SMTP port. The oracles: the world's own records (who exists, which
// connections it accepted, the HELO each session said), the proxies' own counts of the
// connections they made, and the API read back (verdicts, reasons, the ledger).

if (!canMakeNamespaces()) {
  t.plan(0, 'needs root: the service runs in a network namespace (ip netns) whose only way out is the proxies; CI runs it as root')
} else {
  const ns = isolatedNamespace(t)
  const EXISTING = new Set(['alice@proxied-corp.com', 'bob@proxied-corp.com'])
  const PROXIED_MX = '127.0.80.10'
  const BLOCKED_MX = '127.0.80.11'
  const CHECK_MX = '127.0.80.12'
  const ALT_MX = '127.0.80.13'
  const world = await startMailWorld({
    dns_ip: ns.host_ip,
    domains: [
      { name: 'proxied-corp.com', mx: [{ preference: 10, exchange: 'mx1.proxied-corp.com' }] },
      { name: 'blocked-corp.com', mx: [{ preference: 10, exchange: 'mx.blocked-corp.com' }] },
      { name: 'alt-corp.com', mx: [{ preference: 10, exchange: 'mx.alt-corp.com' }] }
    ],
    hosts: [
      {
        name: 'mx1.proxied-corp.com',
        ip: PROXIED_MX,
        rcpt: a => (EXISTING.has(a) ? { code: 250, message: 'OK' } : { code: 550, message: '5.1.1 no such user' })
      },
      { name: 'mx.blocked-corp.com', ip: BLOCKED_MX },
      { name: 'mx.egress-check.com', ip: CHECK_MX },
      { name: 'mx.alt-corp.com', ip: ALT_MX }
    ]
  })
  t.teardown(() => world.close())

  /** A SOCKS5 server on our end of the pair, counting the connections it made, by destination. */
  async function proxy(options: Parameters<typeof socks.createServer>[0]): Promise<{ port: number; made: Map<string, number>; refused: number }> {
    const server: Server = socks.createServer(options)
    const out = { port: 0, made: new Map<string, number>(), refused: 0 }
    server.on('proxyConnect', (destination: { address: string; port: number }) => {
      out.made.set(destination.address, (out.made.get(destination.address) ?? 0) + 1)
    })
    server.on('connectionFilter', () => {
      out.refused++
    })
    await new Promise<void>(resolve => server.listen(0, ns.host_ip, resolve))
    out.port = (server.address() as AddressInfo).port
    t.teardown(() => new Promise<void>(resolve => server.close(() => resolve())))
    return out
  }
  const PASSWORD = 'p@ss:w/rd'
  const good = await proxy({
    authenticate: (user, password, _socket, callback) => {
      setImmediate(callback, user === 'tester' && password === PASSWORD ? undefined : new Error('bad credentials'))
    }
  })
  // The `blocked` route's proxy: its own way to the SMTP port is closed.
  const closed = await proxy({
    connectionFilter: (destination, _origin, callback) => {
      setImmediate(callback, destination.port === world.smtp_port ? new Error('the SMTP port is closed here') : undefined)
    }
  })

  const dataDir = t.testdir()
  const METRICS_TOKEN = 'metrics-token-for-the-egress-test'
  const svc = await startSvc(
    t,
    ['serve'],
    svcEnv(dataDir, {
      HOST: ns.ns_ip,
      METRICS_TOKEN,
      VERIFIER_DNS_SERVERS: world.dns_server,
      VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
      VERIFIER_SMTP_TIMEOUT_MS: '3000',
      VERIFIER_SMTP_PROXY: `socks5://tester:${encodeURIComponent(PASSWORD)}@${ns.host_ip}:${good.port}`,
      VERIFIER_SMTP_ROUTES: JSON.stringify([
        { name: 'blocked', proxy: `socks5://${ns.host_ip}:${closed.port}`, helo_name: 'blocked-route.example', mx: ['*.blocked-corp.com'] },
        {
          name: 'alt',
          proxy: `socks5://tester:${encodeURIComponent(PASSWORD)}@${ns.host_ip}:${good.port}`,
          helo_name: 'alt-route.example',
          mail_from: 'probe@alt-route.example',
          mx: ['mx.alt-corp.*']
        }
      ]),
      VERIFIER_EGRESS_TEST_INTERVAL_S: '1',
      VERIFIER_EGRESS_TEST_MX: 'mx.egress-check.com'
    }),
    [],
    ns.exec
  )
  const api = client(svc.url)

  t.test("the direct way out is really closed: the namespace cannot reach the world's SMTP port", async t => {
    const { execFile } = await import('node:child_process')
    const reached = await new Promise<string>(resolve => {
      execFile(
        'ip',
        [
          'netns',
          'exec',
          ns.name,
          process.execPath,
          '-e',
          `require('net').connect(${world.smtp_port}, '${PROXIED_MX}').on('connect', () => { console.log('connected'); process.exit() }).on('error', e => { console.log(e.code); process.exit() })`
        ],
        (_err, stdout) => resolve(stdout.trim())
      )
    })
    t.equal(reached, 'ECONNREFUSED', 'a direct connection from inside is refused')
  })

  t.test('every live check goes through the proxy and agrees with the world; a refusing proxy is proxy_error, never charged', async t => {
    const token = await signUp(api, dataDir, 'egress@example.com')
    const key = (await api('POST', '/api/keys', { token, body: { name: 'live', environment: 'live' } })).body.raw_key as string
    const addresses = [
      'alice@proxied-corp.com',
      'bob@proxied-corp.com',
      'carol@proxied-corp.com',
      'dave@proxied-corp.com',
      'erin@blocked-corp.com',
      'frank@alt-corp.com'
    ]
    const jobs = new Map<string, string>()
    for (const email of addresses) {
      const r = await api('POST', '/api/verify', { token: key, body: { email } })
      t.equal(r.status, 202, `${email} accepted`)
      jobs.set(email, r.body.uuid)
    }
    const results = new Map<string, any>()
    await waitUntil(async () => {
      for (const [email, uuid] of jobs) {
        if (results.has(email)) continue
        const j = (await api('GET', `/api/verify/${uuid}`, { token: key })).body
        if (j.status === 'completed') results.set(email, j)
      }
      return results.size === jobs.size
    }, 60_000)
    for (const email of addresses.filter(a => a.endsWith('@proxied-corp.com'))) {
      const expected = EXISTING.has(email) ? 'valid' : 'invalid'
      t.equal(results.get(email).verdict, expected, `${email}: ${expected}, as the world says`)
    }
    const erin = results.get('erin@blocked-corp.com')
    t.equal(erin.verdict, 'unknown', 'the refusing proxy: unknown')
    t.equal(erin.reason, 'proxy_error', '…because of the proxy, not the mailbox')
    t.equal(closed.refused > 0, true, 'the blocked route did go to its proxy')
    t.equal(world.connection_log.filter(c => c.ip === BLOCKED_MX).length, 0, 'and the mailbox was never asked')

    // Nothing charged for the proxy's failure: its job's reservation was released in full.
    const groups = (await api('GET', '/api/wallet/transactions/grouped?limit=100', { token })).body.items as Array<{ job_uuid: string | null; amount: number }>
    t.equal(groups.find(g => g.job_uuid === jobs.get('erin@blocked-corp.com'))?.amount, 0, 'the proxy_error job cost nothing')
    t.ok((groups.find(g => g.job_uuid === jobs.get('alice@proxied-corp.com'))?.amount ?? 0) < 0, 'a firm answer is charged')

    // The proxy counts the sessions the engine reports, and so does the world.
    const metrics = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
    const count = (name: string, route: string): number => Number(new RegExp(`^${name}\\{[^}]*route="${route}"[^}]*\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0)
    const engineSessions = count('smtp_route_sessions_total', 'default')
    t.ok(engineSessions >= 1, `the engine reports ${engineSessions} session(s) on the default route`)
    t.equal(good.made.get(PROXIED_MX) ?? 0, engineSessions, 'the proxy made as many connections to the MX as the engine reports sessions')
    t.equal(world.connection_log.filter(c => c.ip === PROXIED_MX).length, engineSessions, 'and the world accepted as many')
    t.ok(count('smtp_proxy_errors_total', 'blocked') >= 1, "the blocked route's proxy errors are counted")
    const helos = world.connection_log.filter(c => c.ip === PROXIED_MX).map(c => c.commands.find(l => /^(EHLO|HELO) /i.test(l)))
    t.ok(helos.length > 0 && helos.every(h => h === 'EHLO verifier.test.example'), "the default route's HELO name")
    // A route of its own (by MX pattern): its HELO name and MAIL FROM, through its proxy.
    t.equal(results.get('frank@alt-corp.com').reason, 'accept_all', 'its MX accepts any address (the world says so): a catch-all')
    const alt = world.connection_log.filter(c => c.ip === ALT_MX)
    t.ok(alt.length >= 1 && alt.every(c => c.commands.includes('EHLO alt-route.example')), "the alt route's HELO name")
    t.ok(
      alt.every(c => c.commands.some(l => l === 'MAIL FROM:<probe@alt-route.example>')),
      "the alt route's MAIL FROM"
    )
    t.equal(count('smtp_route_sessions_total', 'alt'), alt.length, "the alt route's sessions, as the world counts them")
  })

  t.test('the egress self-test goes through each route: /readyz names the failing proxy to the operator', async t => {
    let body: any = null
    await waitUntil(async () => {
      const r = await api('GET', '/readyz', { token: METRICS_TOKEN })
      body = r.body
      return r.status === 503 && body.reasons?.some((x: { component: string }) => x.component === 'egress')
    }, 20_000)
    const egress = body.reasons.find((x: { component: string }) => x.component === 'egress')
    t.equal(egress.problem, 'proxy_failing', 'the blocked route: its proxy fails')
    t.match(egress.detail, /route blocked/, 'named by its route')
    t.notMatch(JSON.stringify(body), /p@ss|tester|w\/rd|p%40ss/, 'no credential in the answer')
    t.ok((good.made.get(CHECK_MX) ?? 0) >= 1, 'the default route was tested through its proxy (a connection to the test MX)')
    t.notMatch(svc.output(), new RegExp(`${encodeURIComponent(PASSWORD)}|${PASSWORD.replace(/[/]/g, '\\/')}`), 'the proxy password is never logged')
  })
}
