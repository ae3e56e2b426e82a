import t, { type Test } from 'tap'
import { startMailWorld, type MailWorld } from '../support/mail-world.ts'
import { connectionsTo, engineFor, lookupsOf, queriesFor } from '../support/mail-world-engine.ts'
import { CHECK_NAMES } from '../../src/domain/checks.ts'

// The engine against DNS as it really answers: truncation and TCP, CNAME chains, AAAA,
// per-record TTLs, dropped queries; and "no network" claims checked against the world's
// logs. This file owns 127.0.91.0/24 (and ::1 port 25 when it is free).
const checks = CHECK_NAMES.filter(c => c !== 'catch_all')
const ip = (n: number): string => `127.0.91.${n}`
const mx = (exchange: string, preference = 10): Array<{ preference: number; exchange: string }> => [{ preference, exchange }]
const janeOnly = (a: string): { code: number; message: string } =>
  a.startsWith('jane@') ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' }
const host = (name: string, n: number, more: object = {}): { name: string; ip: string; rcpt: typeof janeOnly } => ({ name, ip: ip(n), rcpt: janeOnly, ...more })

// An MX set too large for 512 bytes of UDP (RFC 1035 §4.2.1).
const bigMx = [
  { preference: 1, exchange: 'mx.big-depth.com' },
  ...Array.from({ length: 30 }, (_, i) => ({ preference: 20 + i, exchange: `backup-${i}.relay.big-depth.com` }))
]

const world = await startMailWorld({
  dns_ip: ip(1),
  dns: {
    soa: { ttl: 60, minimum: 60 },
    faults: {
      'mx.tchost-depth.com': { truncate: true },
      'mx.hostdrop-depth.com': { drop: 'always' },
      'mx.v6drop-depth.com': { drop: 'always', drop_types: ['AAAA'] }
    }
  },
  domains: [
    { name: 'big-depth.com', mx: bigMx },
    { name: 'tchost-depth.com', mx: mx('mx.tchost-depth.com') },
    { name: 'cname-mx-depth.com', mx: mx('mail.cname-mx-depth.com') },
    { name: 'alias-depth.com', cname: 'canonical-depth.com' },
    { name: 'canonical-depth.com', mx: mx('mx.canonical-depth.com') },
    { name: 'unchased-depth.com', mx: mx('mx.unchased-depth.com') },
    { name: 'canonical2-depth.com', mx: mx('mx.canonical2-depth.com') },
    { name: 'chain-depth.com', mx: mx('a1.chain-depth.com') },
    { name: 'loop-depth.com', mx: mx('l1.loop-depth.com') },
    { name: 'v6only-depth.com', mx: mx('mx.v6only-depth.com') },
    { name: 'v6unreachable-depth.com', mx: mx('mx.v6unreachable-depth.com') },
    { name: 'dual-depth.com', mx: mx('mx.dual-depth.com') },
    { name: 'ttl-depth.com', mx: mx('mx1.ttl-depth.com'), ttl: { MX: 60 } },
    { name: 'zerottl-depth.com', mx: mx('mx.zerottl-depth.com'), ttl: 0 },
    { name: 'cnttl-depth.com', mx: mx('alias.cnttl-depth.com') },
    { name: 'drop1-depth.com', mx: mx('mx.drop1-depth.com'), drop: 1 },
    { name: 'dropall-depth.com', mx: mx('mx.dropall-depth.com'), drop: 'always' },
    { name: 'hostdrop-depth.com', mx: mx('mx.hostdrop-depth.com') },
    { name: 'v6drop-depth.com', mx: mx('mx.v6drop-depth.com') },
    { name: 'control-depth.com', mx: mx('mx.control-depth.com') },
    { name: 'control2-depth.com', mx: mx('mx.control2-depth.com') },
    { name: 'syntaxbad-depth.com', mx: mx('mx.syntaxbad-depth.com') },
    { name: 'mailinator.com', mx: mx('mx.mailinator-depth.com') }
  ],
  records: [
    { name: 'mail.cname-mx-depth.com', type: 'CNAME', data: 'smtp.provider-depth.com' },
    { name: 'unchased-alias-depth.com', type: 'CNAME', data: 'canonical2-depth.com', chase: false },
    { name: 'mx.unchased-depth.com', type: 'CNAME', data: 'mx.outside-depth.com', chase: false },
    { name: 'a1.chain-depth.com', type: 'CNAME', data: 'a2.chain-depth.com' },
    { name: 'a2.chain-depth.com', type: 'CNAME', data: 'mx.chain-depth.com', chase: false },
    { name: 'l1.loop-depth.com', type: 'CNAME', data: 'l2.loop-depth.com' },
    { name: 'l2.loop-depth.com', type: 'CNAME', data: 'l1.loop-depth.com' },
    { name: 'mx.v6only-depth.com', type: 'AAAA', data: '::1' },
    { name: 'mx.v6unreachable-depth.com', type: 'AAAA', data: '100::1' },
    { name: 'alias.cnttl-depth.com', type: 'CNAME', data: 'mx.cnttl-depth.com', ttl: 10 }
  ],
  hosts: [
    host('mx.big-depth.com', 2),
    host('mx.tchost-depth.com', 3),
    host('smtp.provider-depth.com', 4),
    host('mx.canonical-depth.com', 5),
    host('mx.outside-depth.com', 6),
    host('mx.canonical2-depth.com', 7),
    host('mx.chain-depth.com', 8),
    { name: 'mx.dual-depth.com', ip: ip(12), refuse: true },
    host('mx.dual-depth.com', 13, { publish_ip: false, aaaa: [`::ffff:${ip(13)}`] }),
    host('mx1.ttl-depth.com', 14, { ttl: 3_600 }),
    host('mx2.ttl-depth.com', 15),
    host('mx.zerottl-depth.com', 16, { ttl: 0 }),
    host('mx.cnttl-depth.com', 17, { ttl: 3_600 }),
    host('mx.drop1-depth.com', 18),
    host('mx.dropall-depth.com', 19),
    host('mx.hostdrop-depth.com', 20),
    host('mx.v6drop-depth.com', 21, { publish_ip: false, aaaa: [`::ffff:${ip(21)}`] }),
    host('mx.control-depth.com', 22),
    host('mx.syntaxbad-depth.com', 23),
    host('mx.mailinator-depth.com', 24),
    host('mx.control2-depth.com', 25)
  ]
})
t.teardown(() => world.close())

// The IPv6 host on ::1 gets a world of its own (its DNS unused), so that a machine without
// IPv6 loopback, or with port 25 of ::1 taken, still runs the rest.
let v6: MailWorld | null = null
let v6Error = ''
try {
  v6 = await startMailWorld({ dns_ip: ip(250), domains: [], hosts: [{ name: 'mx.v6only-depth.com', ip: '::1', rcpt: janeOnly, publish_ip: false }] })
  t.teardown(() => v6!.close())
} catch (err) {
  v6Error = (err as NodeJS.ErrnoException).code ?? String(err)
}

const only = (world: MailWorld, name: string, type: string): string[] => queriesFor(world, name, type).map(q => `${q.transport} ${q.outcome}`)
// Over UDP first, truncated (retransmissions aside), then over TCP, answered.
function truncatedThenTcp(t: Test, log: string[]): void {
  t.equal(log[0], 'udp truncated', log.join(', '))
  t.equal(log.at(-1), 'tcp answered')
  t.notOk(log.includes('udp answered'), 'never answered over UDP')
}

t.test('an MX answer too big for UDP comes truncated, and is asked again over TCP', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('jane@big-depth.com', checks)
  t.same([r.verdict, r.reason, r.mx?.host], ['valid', 'accepted_email', 'mx.big-depth.com'])
  truncatedThenTcp(t, only(world, 'big-depth.com', 'MX'))
})

t.test('a host whose address answers always come truncated over UDP: TCP', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('jane@tchost-depth.com', checks)
  t.same([r.verdict, r.reason], ['valid', 'accepted_email'])
  truncatedThenTcp(t, only(world, 'mx.tchost-depth.com', 'A'))
  t.equal(connectionsTo(world, ip(3)).length, 1)
})

t.test('CNAMEs: an MX exchange that is an alias, a domain that is one, chased or not, a chain', async t => {
  const { engine } = engineFor(world)
  const rs = await engine.verifyMany(['cname-mx', 'alias', 'unchased-alias', 'chain'].map(d => ({ email: `jane@${d}-depth.com`, checks })))
  t.same(
    rs.map(r => r.reason),
    ['accepted_email', 'accepted_email', 'accepted_email', 'accepted_email']
  )
  t.equal(rs[0].mx?.host, 'mail.cname-mx-depth.com', 'the MX named as published')
  for (const n of [4, 5, 7, 8]) t.equal(connectionsTo(world, ip(n)).length, 1, `the canonical host ${ip(n)} was reached`)
  t.ok(queriesFor(world, 'canonical2-depth.com', 'MX').length >= 1, 'the alias the server did not chase was followed (RFC 5321 §5.1)')
  t.ok(queriesFor(world, 'mx.chain-depth.com', 'A').length >= 1, 'to the end of the chain')
})

t.test('an exchange behind an alias whose target the server does not chase: followed', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('nobody@unchased-depth.com', checks)
  t.same([r.verdict, r.reason], ['invalid', 'mailbox_not_found'])
  t.ok(queriesFor(world, 'mx.outside-depth.com', 'A').length >= 1)
  t.ok(connectionsTo(world, ip(6)).length >= 1)
})

t.test('a CNAME loop ends: unknown, with a bounded number of queries', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('jane@loop-depth.com', checks)
  t.equal(r.verdict, 'unknown')
  t.equal(r.reason, 'unexpected_error')
  t.match(r.checks.find(c => c.name === 'smtp')?.detail, /ECNAMELOOP/)
  t.ok(queriesFor(world, 'l1.loop-depth.com').length <= 8, `${queriesFor(world, 'l1.loop-depth.com').length} queries`)
})

t.test(
  'an MX host with only an AAAA record on ::1',
  { skip: v6 === null && v6Error === 'EADDRINUSE' ? '::1 port 25 is taken by someone else' : false },
  async t => {
    const { engine } = engineFor(world)
    const r = await engine.verify('jane@v6only-depth.com', checks)
    t.ok(queriesFor(world, 'mx.v6only-depth.com', 'AAAA').length >= 1, 'the AAAA was asked')
    if (v6 !== null) {
      t.same([r.verdict, r.reason], ['valid', 'accepted_email'])
      t.equal(connectionsTo(v6, '::1').length, 1, 'reached over IPv6')
    } else {
      t.same([r.verdict, r.reason], ['unknown', 'no_connect'], `no IPv6 loopback here (${v6Error}): not reachable, said so`)
    }
  }
)

t.test('an AAAA-only host that cannot be reached: unknown, no_connect or timeout', async t => {
  const { engine } = engineFor(world, { timeout_ms: 2_000 })
  const r = await engine.verify('jane@v6unreachable-depth.com', checks)
  t.equal(r.verdict, 'unknown')
  t.ok(['no_connect', 'timeout'].includes(r.reason), r.reason)
  t.equal(r.retryable, true)
})

t.test('a host with an A that refuses and an AAAA that answers: the second address is tried', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('jane@dual-depth.com', checks)
  t.same([r.verdict, r.reason], ['valid', 'accepted_email'])
  t.equal(connectionsTo(world, ip(13)).length, 1)
})

t.test('per-record TTLs: a short one is asked again once it ran out, a long one not; the changed zone is used', async t => {
  let clock = Date.now()
  const { engine } = engineFor(world, { now: () => clock })
  const count = (): [number, number] => [lookupsOf(world, 'ttl-depth.com', 'MX'), lookupsOf(world, 'mx1.ttl-depth.com', 'A')]
  t.equal((await engine.verify('jane@ttl-depth.com', checks)).reason, 'accepted_email')
  t.same(count(), [1, 1])
  clock += 59_000
  await engine.verify('jane@ttl-depth.com', checks)
  t.same(count(), [1, 1], 'within the MX TTL (60 s): nothing asked')
  clock += 2_000
  await engine.verify('jane@ttl-depth.com', checks)
  t.same(count(), [2, 1], 'the MX asked again, the host address (TTL 3600 s) not')
  world.update_domain({ name: 'ttl-depth.com', mx: mx('mx2.ttl-depth.com'), ttl: { MX: 60 } })
  clock += 61_000
  t.equal((await engine.verify('jane@ttl-depth.com', checks)).mx?.host, 'mx2.ttl-depth.com')
  t.equal(connectionsTo(world, ip(15)).length, 1, 'the new MX was probed')
})

t.test("TTL 0 is never cached; an alias link's shorter TTL bounds the chain", async t => {
  let clock = Date.now()
  const { engine } = engineFor(world, { now: () => clock })
  await engine.verify('jane@zerottl-depth.com', checks)
  await engine.verify('jane@zerottl-depth.com', checks)
  t.equal(lookupsOf(world, 'zerottl-depth.com', 'MX'), 2)
  await engine.verify('jane@cnttl-depth.com', checks)
  t.equal(lookupsOf(world, 'alias.cnttl-depth.com', 'A'), 1)
  clock += 11_000
  await engine.verify('jane@cnttl-depth.com', checks)
  t.equal(lookupsOf(world, 'alias.cnttl-depth.com', 'A'), 2, 'the CNAME (10 s) ran out though the A (3600 s) did not')
})

t.test('a negative answer is cached for the SOA minimum (RFC 2308)', async t => {
  let clock = Date.now()
  const { engine } = engineFor(world, { now: () => clock })
  t.equal((await engine.verify('jane@nowhere-depth.com', checks)).reason, 'invalid_domain')
  clock += 59_000
  await engine.verify('jane@nowhere-depth.com', checks)
  t.equal(lookupsOf(world, 'nowhere-depth.com', 'MX'), 1)
  clock += 2_000
  await engine.verify('jane@nowhere-depth.com', checks)
  t.equal(lookupsOf(world, 'nowhere-depth.com', 'MX'), 2)
})

t.test('a dropped DNS query is sent again and answered', async t => {
  const { engine } = engineFor(world, { dns_timeout_ms: 400 })
  const r = await engine.verify('jane@drop1-depth.com', checks)
  t.same([r.verdict, r.reason], ['valid', 'accepted_email'])
  t.same(only(world, 'drop1-depth.com', 'MX').slice(0, 2), ['udp dropped', 'udp answered'])
})

t.test('DNS that never answers: unknown/timeout, retryable, and no connection', async t => {
  const { engine } = engineFor(world, { dns_timeout_ms: 300 })
  const [domain, address, v6only, control] = await engine.verifyMany(
    ['dropall', 'hostdrop', 'v6drop', 'control2'].map(d => ({ email: `jane@${d}-depth.com`, checks }))
  )
  t.equal(control.reason, 'accepted_email', 'positive control: an answered domain in the same call')
  t.equal(connectionsTo(world, ip(25)).length, 1, 'was connected to')
  for (const r of [domain, address, v6only]) t.same([r.verdict, r.reason, r.retryable], ['unknown', 'timeout', true], r.email)
  t.ok(queriesFor(world, 'dropall-depth.com').length >= 2, 'asked more than once')
  t.ok(queriesFor(world, 'dropall-depth.com').every(q => q.outcome === 'dropped'))
  t.ok(
    queriesFor(world, 'mx.v6drop-depth.com', 'A').some(q => q.outcome === 'answered'),
    'the A was answered (no data), the AAAA dropped'
  )
  for (const n of [19, 20, 21]) t.equal(connectionsTo(world, ip(n)).length, 0)
})

t.test('"no network" claims: a syntax-invalid address and local checks touch neither DNS nor SMTP', async t => {
  const { engine } = engineFor(world)
  const [bad, disposable, control] = await engine.verifyMany([
    { email: 'jane..doe@syntaxbad-depth.com', checks: CHECK_NAMES },
    { email: 'jane@mailinator.com', checks: ['syntax', 'typo', 'disposable', 'role', 'free'] },
    { email: 'jane@control-depth.com', checks: CHECK_NAMES }
  ])
  t.same([bad.verdict, bad.reason], ['invalid', 'invalid_syntax'])
  t.same([disposable.verdict, disposable.reason], ['risky', 'disposable'])
  t.equal(control.reason, 'accepted_email')
  // Positive control: the same call did reach the world for the control address.
  t.ok(queriesFor(world, 'control-depth.com', 'MX').length >= 1)
  t.equal(connectionsTo(world, ip(22)).length, 1)
  for (const name of ['syntaxbad-depth.com', 'mx.syntaxbad-depth.com', 'mailinator.com', 'mx.mailinator-depth.com'])
    t.equal(queriesFor(world, name).length, 0, `no query for ${name}`)
  t.equal(connectionsTo(world, ip(23)).length + connectionsTo(world, ip(24)).length, 0, 'no connection for them')
})
