import t from 'tap'
import { startMailWorld, type Reply } from '../support/mail-world.ts'
import { connectionsTo, ended, engineFor, rcptsFor, verbs } from '../support/mail-world-engine.ts'
import { CHECK_NAMES } from '../../src/domain/checks.ts'

// The engine against SMTP servers as they really talk: multi-line replies, 2xx texts as
// sent, ENHANCEDSTATUSCODES or not, failing STARTTLS, hang-ups. Counts come from the mail
// world's own logs. This file owns 127.0.90.0/24.
const checks = CHECK_NAMES.filter(c => c !== 'catch_all')

// Gmail's wording, line by line as its servers send it.
const GMAIL_NO_SUCH_USER: Reply = {
  code: 550,
  message: [
    '5.1.1 The email account that you tried to reach does not exist. Please try',
    "5.1.1 double-checking the recipient's email address for typos or",
    '5.1.1 unnecessary spaces. For more information, go to',
    '5.1.1  https://support.google.com/mail/?p=NoSuchUser a1si1234567qkb.12 - gsmtp'
  ]
}
const gmailLike = (a: string): Reply => {
  if (a.startsWith('jane@')) return { code: 250, message: '2.1.5 OK a1si1234567qkb.12 - gsmtp' }
  if (a.startsWith('old@'))
    return {
      code: 550,
      message: [
        '5.2.1 The email account that you tried to reach is disabled. Learn more at',
        '5.2.1  https://support.google.com/mail/?p=DisabledUser a1si1234567qkb.12 - gsmtp'
      ]
    }
  if (a.startsWith('hoarder@'))
    return {
      code: 452,
      message: [
        '4.2.2 The email account that you tried to reach is over quota. Please direct',
        '4.2.2 the recipient to',
        '4.2.2  https://support.google.com/mail/?p=OverQuotaTemp a1si1234567qkb.12 - gsmtp'
      ]
    }
  return GMAIL_NO_SUCH_USER
}
const janeOnly = (a: string): Reply =>
  a.startsWith('jane@')
    ? { code: 250, message: '2.1.5 Ok' }
    : { code: 550, message: `5.1.1 <${a}>: Recipient address rejected: User unknown in virtual mailbox table` }

const ip = (n: number): string => `127.0.90.${n}`
const hosts = {
  multiline: ip(2),
  plain: ip(3),
  enhanced: ip(4),
  ehlo: ip(5),
  heloOnly: ip(6),
  tlsRefused: ip(7),
  tlsBroken: ip(8),
  tlsStall: ip(9),
  dropRcpt: ip(10),
  dropBanner: ip(11),
  resetRcpt: ip(12),
  dropConnect: ip(13),
  dropAfterFirst: ip(14)
}
const world = await startMailWorld({
  dns_ip: ip(1),
  domains: Object.keys(hosts).map(k => ({ name: `${k.toLowerCase()}-depth.com`, mx: [{ preference: 10, exchange: `mx.${k.toLowerCase()}-depth.com` }] })),
  hosts: [
    {
      name: 'mx.multiline-depth.com',
      ip: hosts.multiline,
      rcpt: gmailLike,
      verbatim: true,
      enhanced_status_codes: true,
      line_delay_ms: 5,
      banner_reply: { code: 220, message: ['mx.multiline-depth.com ESMTP a1si1234567qkb.12 - gsmtp', 'No UCE, no harvesting of addresses'] },
      ehlo: {
        code: 250,
        message: [
          'mx.multiline-depth.com at your service, [127.0.0.1]',
          'SIZE 157286400',
          '8BITMIME',
          'ENHANCEDSTATUSCODES',
          'PIPELINING',
          'CHUNKING',
          'SMTPUTF8'
        ]
      }
    },
    {
      name: 'mx.plain-depth.com',
      ip: hosts.plain,
      verbatim: true,
      rcpt: a =>
        a.startsWith('jane@')
          ? { code: 250, message: 'Ok' }
          : a.startsWith('gone@')
            ? { code: 550, message: 'Requested action not taken: mailbox unavailable' }
            : a.startsWith('listed@')
              ? { code: 554, message: 'Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org' }
              : { code: 550, message: `<${a}>: Recipient address rejected: User unknown in local recipient table` }
    },
    { name: 'mx.enhanced-depth.com', ip: hosts.enhanced, enhanced_status_codes: true, rcpt: janeOnly },
    {
      name: 'mx.ehlo-depth.com',
      ip: hosts.ehlo,
      starttls: true,
      rcpt: janeOnly,
      verbatim: true,
      line_delay_ms: 5,
      ehlo: { code: 250, message: ['mx.ehlo-depth.com Hello [127.0.0.1]', 'SIZE 52428800', 'STARTTLS', 'AUTH LOGIN PLAIN', '8BITMIME', 'CHUNKING'] }
    },
    { name: 'mx.heloonly-depth.com', ip: hosts.heloOnly, ehlo: { code: 502, message: '5.5.2 Error: command not recognized' }, rcpt: janeOnly },
    { name: 'mx.tlsrefused-depth.com', ip: hosts.tlsRefused, enhanced_status_codes: true, starttls_failure: 'refuse', rcpt: janeOnly },
    { name: 'mx.tlsbroken-depth.com', ip: hosts.tlsBroken, starttls_failure: 'handshake', rcpt: janeOnly },
    { name: 'mx.tlsstall-depth.com', ip: hosts.tlsStall, starttls_failure: 'stall', rcpt: janeOnly },
    { name: 'mx.droprcpt-depth.com', ip: hosts.dropRcpt, rcpt: janeOnly, drop: { at: 'RCPT' } },
    { name: 'mx.dropbanner-depth.com', ip: hosts.dropBanner, rcpt: janeOnly, drop: { at: 'banner' } },
    { name: 'mx.resetrcpt-depth.com', ip: hosts.resetRcpt, rcpt: janeOnly, drop: { at: 'RCPT', reset: true } },
    { name: 'mx.dropconnect-depth.com', ip: hosts.dropConnect, rcpt: janeOnly, drop: { at: 'connect' } },
    { name: 'mx.dropafterfirst-depth.com', ip: hosts.dropAfterFirst, rcpt: janeOnly, drop: { at: 'RCPT', after_reply: true, sessions: 1 } }
  ]
})
t.teardown(() => world.close())

const smtpDetail = (r: { checks: Array<{ name: string; detail: string | null }> }): string => r.checks.find(c => c.name === 'smtp')?.detail ?? ''

t.test('a multi-line 550 5.1.1, each line in its own segment: invalid, mailbox_not_found', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('nobody@multiline-depth.com', checks)
  t.equal(r.verdict, 'invalid')
  t.equal(r.reason, 'mailbox_not_found')
  t.equal(r.smtp?.code, 550)
  t.equal(r.smtp?.enhanced_code, '5.1.1')
  t.match(
    r.smtp?.message,
    /^The email account that you tried to reach does not exist\. Please try double-checking .* - gsmtp$/,
    'the lines joined, codes stripped'
  )
  t.equal(rcptsFor(world, 'nobody@multiline-depth.com'), 1, 'one RCPT reached the server')
  t.equal(connectionsTo(world, hosts.multiline).length, 1, 'in one connection')
})

t.test('multi-line 5.2.1 and 4.2.2, and a 2xx text as sent, in one session after a multi-line greeting', async t => {
  const { engine } = engineFor(world)
  const before = connectionsTo(world, hosts.multiline).length
  const [jane, old, hoarder] = await engine.verifyMany(['jane', 'old', 'hoarder'].map(l => ({ email: `${l}@multiline-depth.com`, checks })))
  t.same([jane.verdict, jane.reason], ['valid', 'accepted_email'])
  t.same(jane.smtp, { code: 250, enhanced_code: '2.1.5', message: 'OK a1si1234567qkb.12 - gsmtp' }, 'the 2xx text as the server said it')
  t.same([old.verdict, old.reason], ['invalid', 'mailbox_disabled'])
  t.same([hoarder.verdict, hoarder.reason, hoarder.smtp?.enhanced_code], ['risky', 'mailbox_full', '4.2.2'])
  const sessions = connectionsTo(world, hosts.multiline).slice(before)
  t.equal(sessions.length, 1, 'one session served the three')
  t.same(verbs(sessions[0]).filter(v => v === 'RCPT').length, 3)
})

t.test('a multi-line EHLO with STARTTLS among other extensions: TLS is used', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('jane@ehlo-depth.com', checks)
  t.same([r.verdict, r.reason], ['valid', 'accepted_email'])
  t.match(smtpDetail(r), /\(TLS\)/)
  await ended(world, hosts.ehlo)
  const [c] = connectionsTo(world, hosts.ehlo)
  t.equal(c.tls, true, 'the world saw the session switch to TLS')
  t.same(verbs(c), ['EHLO', 'STARTTLS', 'EHLO', 'MAIL', 'RCPT', 'QUIT'])
})

t.test('EHLO refused: HELO, and the address is still judged', async t => {
  const { engine } = engineFor(world)
  const [jane, nobody] = await engine.verifyMany([
    { email: 'jane@heloonly-depth.com', checks },
    { email: 'nobody@heloonly-depth.com', checks }
  ])
  t.equal(jane.reason, 'accepted_email')
  t.equal(nobody.reason, 'mailbox_not_found')
  t.same(verbs(connectionsTo(world, hosts.heloOnly)[0]).slice(0, 3), ['EHLO', 'HELO', 'MAIL'])
})

t.test('ENHANCEDSTATUSCODES advertised: the codes of every reply are read', async t => {
  const { engine } = engineFor(world)
  const [jane, nobody] = await engine.verifyMany([
    { email: 'jane@enhanced-depth.com', checks },
    { email: 'nobody@enhanced-depth.com', checks }
  ])
  t.same(jane.smtp, { code: 250, enhanced_code: '2.1.5', message: 'Accepted' })
  t.same([nobody.verdict, nobody.reason, nobody.smtp?.enhanced_code], ['invalid', 'mailbox_not_found', '5.1.1'])
})

t.test('ENHANCEDSTATUSCODES not advertised: no code is invented, the wording decides', async t => {
  const { engine } = engineFor(world)
  const rs = await engine.verifyMany(['jane', 'nobody', 'gone', 'listed'].map(l => ({ email: `${l}@plain-depth.com`, checks })))
  t.same(rs[0].smtp, { code: 250, enhanced_code: null, message: 'Ok' })
  t.same(
    rs.map(r => [r.verdict, r.reason]),
    [
      ['valid', 'accepted_email'],
      ['invalid', 'mailbox_not_found'],
      ['invalid', 'mailbox_not_found'],
      ['unknown', 'ip_blocked']
    ]
  )
  t.ok(rs.every(r => r.smtp?.enhanced_code === null))
})

t.test('STARTTLS refused with 454 4.7.0: the session goes on in clear text and says so', async t => {
  const { engine } = engineFor(world)
  const [jane, nobody] = await engine.verifyMany([
    { email: 'jane@tlsrefused-depth.com', checks },
    { email: 'nobody@tlsrefused-depth.com', checks }
  ])
  t.same([jane.verdict, jane.reason], ['valid', 'accepted_email'])
  t.same([nobody.verdict, nobody.reason], ['invalid', 'mailbox_not_found'])
  t.match(smtpDetail(jane), /clear text.*454/)
  const sessions = connectionsTo(world, hosts.tlsRefused)
  t.equal(sessions.length, 1, 'one connection')
  t.same(verbs(sessions[0]).slice(0, 3), ['EHLO', 'STARTTLS', 'MAIL'])
  t.equal(sessions[0].tls, false)
})

for (const [label, host, domain] of [
  ['a failed TLS handshake (fatal alert)', hosts.tlsBroken, 'tlsbroken-depth.com'],
  ['a STARTTLS that never speaks TLS (timeout)', hosts.tlsStall, 'tlsstall-depth.com']
] as const) {
  t.test(`${label}: asked again in clear text, judged, and the detail says why`, async t => {
    const { engine } = engineFor(world, { timeout_ms: 600 })
    const [jane, nobody] = await engine.verifyMany([
      { email: `jane@${domain}`, checks },
      { email: `nobody@${domain}`, checks }
    ])
    t.same([jane.verdict, jane.reason], ['valid', 'accepted_email'])
    t.same([nobody.verdict, nobody.reason], ['invalid', 'mailbox_not_found'])
    t.match(smtpDetail(jane), /clear text.*STARTTLS failed/)
    const sessions = connectionsTo(world, host)
    t.equal(sessions.length, 2, 'the TLS attempt, then one clear-text session')
    t.same(verbs(sessions[0]), ['EHLO', 'STARTTLS'])
    t.notOk(verbs(sessions[1]).includes('STARTTLS'), 'no STARTTLS the second time')
    t.equal(rcptsFor(world, `jane@${domain}`), 1)
  })
}

t.test('a connection dropped at RCPT: unknown/smtp_unavailable, retryable, nothing thrown', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('jane@droprcpt-depth.com', checks)
  t.same([r.verdict, r.reason, r.retryable], ['unknown', 'smtp_unavailable', true])
  t.match(smtpDetail(r), /closed/)
  t.ok(rcptsFor(world, 'jane@droprcpt-depth.com') >= 1, 'the RCPT did reach the server')
  const last = connectionsTo(world, hosts.dropRcpt).at(-1)!
  t.equal(verbs(last).at(-1), 'RCPT')
  t.equal(last.closed_by, 'server')
})

t.test('a TCP reset at RCPT: unknown/smtp_unavailable', async t => {
  const { engine } = engineFor(world)
  const r = await engine.verify('jane@resetrcpt-depth.com', checks)
  t.same([r.verdict, r.reason], ['unknown', 'smtp_unavailable'])
  t.ok(rcptsFor(world, 'jane@resetrcpt-depth.com') >= 1)
})

t.test('hang-ups before the conversation: right after the banner, or before any banner', async t => {
  const { engine } = engineFor(world)
  const [banner, connect] = await engine.verifyMany([
    { email: 'jane@dropbanner-depth.com', checks },
    { email: 'jane@dropconnect-depth.com', checks }
  ])
  t.same([banner.verdict, banner.reason], ['unknown', 'smtp_unavailable'])
  t.same([connect.verdict, connect.reason], ['unknown', 'smtp_unavailable'])
  t.ok(connectionsTo(world, hosts.dropBanner).length >= 1, 'the world saw the connection')
  t.ok(
    connectionsTo(world, hosts.dropConnect).every(c => c.commands.length === 0),
    'which never sent a command'
  )
  t.equal(world.transcript.filter(l => l.startsWith(`${hosts.dropBanner} `) || l.startsWith(`${hosts.dropConnect} `)).length, 0)
})

t.test('a hang-up after answering one RCPT: the others are asked in another session', async t => {
  const { engine } = engineFor(world)
  const rs = await engine.verifyMany(['jane', 'nobody', 'ghost'].map(l => ({ email: `${l}@dropafterfirst-depth.com`, checks })))
  t.same(
    rs.map(r => r.reason),
    ['accepted_email', 'mailbox_not_found', 'mailbox_not_found']
  )
  const sessions = connectionsTo(world, hosts.dropAfterFirst)
  t.equal(sessions.length, 2)
  t.equal(verbs(sessions[0]).filter(v => v === 'RCPT').length, 1, 'the first session ended after one RCPT')
  t.equal(
    rs.reduce((n, r) => n + rcptsFor(world, r.email), 0),
    3,
    'each address asked once'
  )
})
