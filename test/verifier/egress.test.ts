import t from 'tap'
import { describeProxy, EgressRoutes, parseSocksUrl, type EgressRoute } from '../../src/verifier/egress.ts'
import { loadConfig } from '../../src/config.ts'

// Egress routes: the SOCKS5 URL as RFC 3986 writes user and password (percent-encoded),
// which route carries which mail host (the configuration's order, the default last), and
// a proxy said without its credentials.

t.test('a socks5 URL: host, port, user and password percent-decoded; anything else refused', async t => {
  t.same(parseSocksUrl('socks5://bob:p%40ss%3Aw%2Frd@10.0.0.5:1080'), { host: '10.0.0.5', port: 1080, user: 'bob', password: 'p@ss:w/rd' })
  t.same(parseSocksUrl('socks5://proxy.example:1080'), { host: 'proxy.example', port: 1080, user: null, password: null })
  t.same(parseSocksUrl('socks5://[2001:db8::1]:1080'), { host: '2001:db8::1', port: 1080, user: null, password: null })
  t.throws(() => parseSocksUrl('socks5h://proxy.example:1080'), /socks5:/, 'socks5h would let the proxy resolve names: refused')
  t.throws(() => parseSocksUrl('http://proxy.example:3128'), /socks5:/)
  t.throws(() => parseSocksUrl('socks5://proxy.example'), /port/)
  t.throws(() => parseSocksUrl('not a url'), /socks5:\/\//)
})

t.test('a proxy said without its credentials', async t => {
  t.equal(describeProxy(null), 'direct')
  t.equal(describeProxy(parseSocksUrl('socks5://bob:secret@10.0.0.5:1080')), 'socks5://***@10.0.0.5:1080')
  t.equal(describeProxy(parseSocksUrl('socks5://[2001:db8::1]:1080')), 'socks5://[2001:db8::1]:1080')
})

t.test('routing: the first route naming the provider or matching the MX, else the default', async t => {
  const route = (name: string, o: Partial<EgressRoute>): EgressRoute => ({
    name,
    proxy: null,
    helo_name: `${name}.example`,
    mail_from: `v@${name}.example`,
    providers: [],
    mx: [],
    ...o
  })
  const routes = new EgressRoutes(
    [route('google', { providers: ['google'] }), route('microsoft', { mx: ['*.mail.protection.outlook.com'] })],
    route('default', {})
  )
  t.equal(routes.routeFor('google', 'aspmx.l.google.com').name, 'google')
  t.equal(routes.routeFor(null, 'acme-com.mail.protection.outlook.com').name, 'microsoft')
  t.equal(routes.routeFor(null, 'ACME-COM.MAIL.PROTECTION.OUTLOOK.COM.').name, 'microsoft', 'case and a trailing dot do not matter')
  t.equal(routes.routeFor(null, 'mail.protection.outlook.com.evil.example').name, 'default', 'a pattern matches the whole name')
  t.equal(routes.routeFor('yahoo', 'mta5.am0.yahoodns.net').name, 'default')
})

t.test('configuration: the default route from VERIFIER_SMTP_PROXY, routes from VERIFIER_SMTP_ROUTES, bad ones refused', async t => {
  const dir = t.testdir()
  const c = loadConfig({
    DATA_DIR: dir,
    VERIFIER_HELO_NAME: 'v.example',
    VERIFIER_SMTP_PROXY: 'socks5://u:p@10.0.0.5:1080',
    VERIFIER_SMTP_ROUTES: JSON.stringify([{ name: 'eu', proxy: 'socks5://10.0.0.6:1080', helo_name: 'eu.example', mx: ['*.eu.example'] }])
  })
  t.match(c.verifier.routes, [
    { name: 'eu', proxy: { host: '10.0.0.6' }, helo_name: 'eu.example', mail_from: 'verify@eu.example', mx: ['*.eu.example'] },
    { name: 'default', proxy: { host: '10.0.0.5', user: 'u', password: 'p' }, helo_name: 'v.example', mail_from: 'verify@v.example' }
  ])
  t.throws(() => loadConfig({ DATA_DIR: dir, VERIFIER_SMTP_ROUTES: '[{"name":"x"}]' }), /names the providers or MX patterns/)
  t.throws(() => loadConfig({ DATA_DIR: dir, VERIFIER_SMTP_ROUTES: '[{"name":"default","mx":["a"]}]' }), /default/)
  t.throws(() => loadConfig({ DATA_DIR: dir, VERIFIER_SMTP_ROUTES: 'not json' }), /not JSON/)
  t.throws(() => loadConfig({ DATA_DIR: dir, VERIFIER_SMTP_PROXY: 'socks4://10.0.0.5:1080' }), /socks5/)
})
