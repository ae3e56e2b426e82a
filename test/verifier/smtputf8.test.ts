// UTF-8 mailboxes (RFC 6531). Where the server offers SMTPUTF8, the envelope that carries one
// declares it on MAIL FROM (§3.4); an envelope of ASCII addresses does not. Where the server
// does not offer it (OpenSMTPD 6.8, for one, answers an undeclared UTF-8 recipient `501 5.1.3
// Invalid address`), the mailbox cannot be asked in that form: it comes out unknown with the
// reason, never invalid, and is not asked at all. The oracle: the commands the world's hosts
// received, and the truth of each address.
// This file owns 127.0.25.0/24.
import t from 'tap'
import { startMailWorld } from '../support/mail-world.ts'
import { connectionsTo, engineFor, rcptsFor } from '../support/mail-world-engine.ts'
import { CHECK_NAMES } from '../../src/domain/checks.ts'

const exists = (a: string): { code: number; message: string } =>
  /^(josé|ok|zoë)/.test(a) ? { code: 250, message: '2.1.5 Ok' } : { code: 550, message: '5.1.1 User unknown' }
const world = await startMailWorld({
  dns_ip: '127.0.25.1',
  domains: [
    { name: 'utf8-offered.com', mx: [{ preference: 10, exchange: 'mx.utf8-offered.com' }] },
    { name: 'utf8-absent.com', mx: [{ preference: 10, exchange: 'mx.utf8-absent.com' }] }
  ],
  hosts: [
    // The world's default EHLO offers PIPELINING, 8BITMIME and SMTPUTF8.
    { name: 'mx.utf8-offered.com', ip: '127.0.25.2', rcpt: exists },
    {
      name: 'mx.utf8-absent.com',
      ip: '127.0.25.3',
      ehlo: { code: 250, message: ['mx.utf8-absent.com Hello', '8BITMIME', 'PIPELINING', 'SIZE 36700160', 'DSN', 'HELP'] },
      rcpt: a => (/[^\p{ASCII}]/u.test(a) ? { code: 501, message: '5.1.3 Invalid address' } : exists(a))
    }
  ]
})
t.teardown(() => world.close())
const all = [...CHECK_NAMES]
const mailFroms = (ip: string): string[] => connectionsTo(world, ip).flatMap(c => c.commands.filter(l => /^MAIL FROM/i.test(l)))

t.test('offered: the envelope with a UTF-8 mailbox declares SMTPUTF8; the answers are firm', async t => {
  const { engine } = engineFor(world)
  const results = await engine.verifyMany(
    ['josé@utf8-offered.com', 'ok1@utf8-offered.com', 'zoë.nobody@utf8-offered.com'].map(email => ({ email, checks: all }))
  )
  t.same(
    results.map(r => r.reason),
    ['accepted_email', 'accepted_email', 'accepted_email'],
    'each as the server answered'
  )
  t.equal(rcptsFor(world, 'josé@utf8-offered.com'), 1, 'the UTF-8 mailbox was asked')
  t.ok(
    mailFroms('127.0.25.2').some(l => / SMTPUTF8$/i.test(l)),
    `MAIL FROM declared SMTPUTF8 (${mailFroms('127.0.25.2').join(' | ')})`
  )
})

t.test('offered, ASCII only: MAIL FROM as before, without SMTPUTF8', async t => {
  const { engine } = engineFor(world)
  const before = mailFroms('127.0.25.2').length
  const [r] = await engine.verifyMany([{ email: 'ok2@utf8-offered.com', checks: all }])
  t.equal(r.reason, 'accepted_email')
  const fresh = mailFroms('127.0.25.2').slice(before)
  t.ok(fresh.length > 0, 'positive control: envelopes were opened')
  t.ok(
    fresh.every(l => !/SMTPUTF8/i.test(l)),
    fresh.join(' | ')
  )
})

t.test('not offered: the UTF-8 mailbox is unknown with the reason, never invalid, and not asked', async t => {
  const { engine } = engineFor(world)
  const results = await engine.verifyMany(['josé@utf8-absent.com', 'ok3@utf8-absent.com', 'nobody@utf8-absent.com'].map(email => ({ email, checks: all })))
  t.equal(rcptsFor(world, 'ok3@utf8-absent.com'), 1, 'positive control: the ASCII ones were asked of the same server')
  t.equal(rcptsFor(world, 'josé@utf8-absent.com'), 0, 'the UTF-8 one was not (the server would answer 501 5.1.3)')
  t.match(results[0], { verdict: 'unknown', reason: 'smtp_unavailable' }, 'unknown, not invalid')
  const smtp = results[0].checks.find(c => c.name === 'smtp')
  t.match(smtp?.detail, /does not offer SMTPUTF8/, `the reason is said (${smtp?.detail})`)
  t.same(
    results.slice(1).map(r => r.reason),
    ['accepted_email', 'mailbox_not_found'],
    'the ASCII ones firm'
  )
})
