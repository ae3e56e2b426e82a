import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readFileSync } from 'node:fs'
import type { AddressInfo, Server } from 'node:net'
import socks from 'simple-socks'
import { startMailWorld } from '../support/mail-world.ts'
import { svcEnv } from '../support/processes.ts'

// `svc doctor`: the configuration with its secrets elided,
// the stores' reachability, the egress test of every route and the versions, as JSON;
// exit 0 when all is well, 1 when something is wrong. The oracles: the secrets this test
// set (never printed), package.json's version, the mail world's own connection log and
// the SOCKS server's own count.

const run = promisify(execFile)
const cli = new URL('../../bin/svc.js', import.meta.url).pathname
const world = await startMailWorld({
  dns_ip: '127.0.82.1',
  domains: [],
  hosts: [{ name: 'mx.doctor-corp.com', ip: '127.0.82.10' }]
})
t.teardown(() => world.close())
const proxy: Server = socks.createServer({
  authenticate: (user, password, _socket, callback) => {
    setImmediate(callback, user === 'ops' && password === PROXY_PASSWORD ? undefined : new Error('bad credentials'))
  }
})
let proxied = 0
proxy.on('proxyConnect', () => {
  proxied++
})
await new Promise<void>(resolve => proxy.listen(0, '127.0.82.2', resolve))
t.teardown(() => new Promise<void>(resolve => proxy.close(() => resolve())))

const PROXY_PASSWORD = 'proxy-pass-7f3c'
const STRIPE = 'sk_test_doctor_9d2e61'
const METRICS = 'metrics-token-doctor-51aa'

const doctor = async (env: NodeJS.ProcessEnv): Promise<{ code: number; out: any; stdout: string; stderr: string }> => {
  try {
    const r = await run(process.execPath, [cli, 'doctor', '--timeout-ms', '3000'], { env })
    return { code: 0, out: JSON.parse(r.stdout), stdout: r.stdout, stderr: r.stderr }
  } catch (err: any) {
    return { code: err.code, out: err.stdout ? JSON.parse(err.stdout) : null, stdout: err.stdout, stderr: err.stderr }
  }
}
const base = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  svcEnv(t.testdir(), {
    LOG_LEVEL: 'silent',
    VERIFIER_DNS_TIMEOUT_MS: '300',
    VERIFIER_SMTP_TIMEOUT_MS: '2000',
    VERIFIER_ALLOW_PRIVATE_TARGETS: 'true',
    VERIFIER_EGRESS_TEST_MX: 'mx.doctor-corp.com',
    STRIPE_SECRET_KEY: STRIPE,
    METRICS_TOKEN: METRICS,
    ...extra
  })

t.test('a healthy configuration: exit 0, every check ok, no secret printed', async t => {
  const r = await doctor(
    base({
      VERIFIER_DNS_SERVERS: world.dns_server,
      VERIFIER_SMTP_PROXY: `socks5://ops:${PROXY_PASSWORD}@127.0.82.2:${(proxy.address() as AddressInfo).port}`
    })
  )
  t.equal(r.code, 0, r.stderr)
  t.equal(r.out.ok, true)
  t.equal(r.out.versions.svc, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version)
  t.equal(r.out.versions.node, process.versions.node)
  t.match(r.out.stores, { event_store: { ok: true, kind: 'sqlite' }, read_store: { ok: true }, data_keys: { ok: true } })
  t.match(r.out.egress, { ok: true, dns: { ok: true }, routes: [{ route: 'default', ok: true, banner: 220 }] })
  t.match(r.out.egress.routes[0].via, /^socks5:\/\/\*\*\*@127\.0\.82\.2:\d+$/, 'the proxy named without its credentials')
  t.ok(proxied >= 1, 'the egress test went through the proxy')
  t.ok(
    world.connection_log.some(c => c.ip === '127.0.82.10'),
    'and reached the test MX'
  )
  for (const secret of [PROXY_PASSWORD, STRIPE, METRICS]) t.notOk(r.stdout.includes(secret) || r.stderr.includes(secret), 'a secret is never printed')
  t.equal(r.out.config.billing.stripe_secret_key, '[set]', 'a secret that is set says so')
  t.equal(r.out.config.metrics.token, '[set]')
})

t.test('a broken configuration: a dead resolver and an unreachable NATS, exit 1 naming both', async t => {
  const r = await doctor(base({ VERIFIER_DNS_SERVERS: '127.0.82.3:9', NATS_URL: 'nats://nats-user:nats-pass@127.0.82.4:1' }))
  t.equal(r.code, 1)
  t.equal(r.out.ok, false)
  t.match(r.out.egress, { ok: false, problem: 'dns_failing', dns: { ok: false } })
  t.match(r.out.stores.nats, { ok: false, error: String })
  t.match(r.out.stores.event_store, { ok: true }, 'what works is said to work')
  t.equal(r.out.config.nats_url, 'nats://***@127.0.82.4:1', 'credentials taken out of a URL')
  t.notOk(r.stdout.includes('nats-pass'))
})

t.test('an invalid configuration: exit 1 with what is wrong', async t => {
  const r = await doctor(base({ VERIFIER_SMTP_PROXY: 'http://proxy.example:3128' }))
  t.equal(r.code, 1)
  t.match(r.out, { ok: false, config: { ok: false, error: /VERIFIER_SMTP_PROXY.*socks5/ } })
})
